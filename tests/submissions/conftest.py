"""Fixtures of the submission channels: users in teams, tokens, hardware and a few workload rows
(created directly: fast, no JAX import), and no broker (enqueueing is recorded instead)."""

import io
import zipfile

import pytest

# (id, slug, public folder name, title, source, category)
WORKLOADS = [
    ("1p", "1p-flash-attention", "1p_Flash_Attention", "Flash attention", "maxtext", "attention"),
    ("8p", "8p-gemm", "8p_GEMM", "GEMM", "maxtext", "matmul"),
    ("12p", "12p-rmsnorm", "12p_RMSNorm", "RMSNorm", "maxtext", "normalization"),
    ("13p", "13p-cross-entropy", "13p_Cross_Entropy", "Cross entropy", "maxtext", "loss"),
    ("18k", "18k-conv2d-relu-biasadd", "18k_Conv2D_ReLU_BiasAdd", "Conv2D ReLU BiasAdd", "kernelbench-l2", "conv"),
]

KERNEL = '''import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

CONFIG = {}


def _kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def workload(*inputs):
    x = inputs[0]
    return pl.pallas_call(_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
'''


def kernel(tag: str = "") -> str:
    return KERNEL + (f"\n# {tag}\n" if tag else "")


def make_zip(members: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


@pytest.fixture(autouse=True)
def no_broker(monkeypatch):
    """Evaluations are created for real; the wake-up messages are recorded, not sent."""
    sent = []
    monkeypatch.setattr("evaluator.pipeline.enqueue_many", lambda ids, queue: sent.append((list(ids), queue)))
    return sent


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def fresh_throttles():
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def catalog(db):
    from catalog.models import Workload
    from catalog.registry_sync import sync_hardware

    sync_hardware()
    rows = []
    for wid, slug, public, title, source, category in WORKLOADS:
        rows.append(
            Workload.objects.create(
                wid=wid,
                number=int(wid[:-1]),
                slug=slug,
                public_name=public,
                title=title,
                source=source,
                model="Llama" if source == "maxtext" else "KernelBench L2",
                category=category,
                atol=1e-2,
                rtol=1e-2,
                input_names=["x"],
                profiles={"small": {"n": 8}, "full": {"n": 1024}},
                shapes={"small": {"inputs": [{"name": "x", "shape": [8], "dtype": "bfloat16"}]}},
                costs={"small": {"flops": 8, "bytes": 32}},
                reference_source="def reference(x):\n    return x\n",
            )
        )
    return rows


class People:
    def __init__(self):
        from django.contrib.auth import get_user_model

        from submissions.models import ApiToken, Membership, Team

        User = get_user_model()
        self.alice = User.objects.create_user("alice", "alice@example.org", "pw-alice-123")
        self.bob = User.objects.create_user("bob", "bob@example.org", "pw-bob-123")
        self.staff = User.objects.create_user("staff", "staff@example.org", "pw-staff-123", is_staff=True)
        self.loner = User.objects.create_user("loner", "loner@example.org", "pw-loner-123")
        self.team_a = Team.objects.create(name="Team A")
        self.team_b = Team.objects.create(name="Team B")
        Membership.objects.create(team=self.team_a, user=self.alice, role=Membership.OWNER)
        Membership.objects.create(team=self.team_b, user=self.bob, role=Membership.OWNER)
        self.tokens = {
            u.username: ApiToken.issue(u, "tests")[1] for u in (self.alice, self.bob, self.staff, self.loner)
        }


@pytest.fixture
def people(db):
    return People()


@pytest.fixture
def api(client):
    """A DRF-less helper: the Django test client with a Bearer token."""

    class Api:
        def __init__(self, token=None):
            self.headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}

        def get(self, path, data=None):
            return client.get(path, data, **self.headers)

        def post(self, path, data=None, content_type=None, **kw):
            if content_type:
                return client.post(path, data, content_type=content_type, **self.headers, **kw)
            return client.post(path, data or {}, **self.headers, **kw)

    return Api


def counts():
    """Rows of every table the intake writes."""
    from evaluator.models import Evaluation
    from submissions.models import Candidate, Submission

    return (Submission.objects.count(), Candidate.objects.count(), Evaluation.objects.count())
