"""A small HTTP client for the portal's v1 API, with clear errors and exit codes."""

from __future__ import annotations

import random
import time
from typing import Any

import requests

from jaxbench.client import __version__

EXIT_OK = 0
EXIT_INVALID = 1  # the portal (or the offline check) rejected the input
EXIT_USAGE = 2  # bad command line or configuration
EXIT_AUTH = 3  # missing, invalid or revoked token; not allowed
EXIT_NOT_FOUND = 4
EXIT_SERVER = 5  # the portal is unreachable or failed
EXIT_TIMEOUT = 6  # --wait ran out of time
EXIT_THROTTLED = 7  # too many requests: try again later


class ClientError(Exception):
    """An error to show the user, with the exit code to leave with."""

    def __init__(self, message: str, exit_code: int, errors: list[dict] | None = None, body=None):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.errors = errors or []
        self.body = body


def _exit_code_for(status: int) -> int:
    if status in (401, 403):
        return EXIT_AUTH
    if status == 404:
        return EXIT_NOT_FOUND
    if status == 429:
        return EXIT_THROTTLED
    if status >= 500:
        return EXIT_SERVER
    return EXIT_INVALID


def _errors_from_body(body) -> tuple[str, list[dict]]:
    """The portal's ``{"detail", "errors": [...]}`` or DRF's ``{"field": ["msg"]}``."""
    if isinstance(body, dict):
        errors: list[Any] = body["errors"] if isinstance(body.get("errors"), list) else []
        detail = body.get("detail")
        if not errors and detail is None:
            for field, msgs in body.items():
                for m in msgs if isinstance(msgs, list) else [msgs]:
                    errors.append({"field": field, "message": str(m)})
            detail = "The request was rejected."
        return str(detail or "The request was rejected."), [e for e in errors if isinstance(e, dict)]
    if isinstance(body, list):
        return "The request was rejected.", [{"field": None, "message": str(m)} for m in body]
    return str(body)[:500] or "no details", []


class Portal:
    def __init__(self, url: str, token: str | None = None, timeout: float = 120.0, retries: int = 3):
        if not url:
            raise ClientError("no portal URL: pass --url or set JAXBENCH_URL", EXIT_USAGE)
        if not url.startswith(("http://", "https://")):
            raise ClientError(f"the portal URL must start with http:// or https://, not {url!r}", EXIT_USAGE)
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.retries = retries
        self.session = requests.Session()
        self.session.headers["User-Agent"] = f"jaxbench-client/{__version__}"
        self.session.headers["Accept"] = "application/json"
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"

    def api(self, path: str) -> str:
        if path.startswith(("http://", "https://")):
            return path
        return f"{self.url}/api/v1/{path.lstrip('/')}"

    def require_token(self):
        if not self.token:
            raise ClientError(
                "no API token: pass --token or set JAXBENCH_TOKEN (create one on your account "
                f"page, {self.url}/account/)",
                EXIT_USAGE,
            )

    def request(self, method: str, path: str, *, idempotent: bool | None = None, rewind=None, **kwargs):
        """Send a request; retry connection failures, 5xx and 429 when the request is idempotent
        (GETs, and uploads that carry an upload key). ``rewind`` resets a streamed body."""
        if idempotent is None:
            idempotent = method.upper() == "GET"
        attempts = 1 + (self.retries if idempotent else 0)
        url = self.api(path)
        last: Exception | None = None
        for attempt in range(attempts):
            if attempt:
                if rewind:
                    rewind()
            try:
                resp = self.session.request(method, url, timeout=self.timeout, **kwargs)
            except requests.RequestException as exc:
                last = ClientError(
                    f"cannot reach the portal at {self.url}: {exc.__class__.__name__}: {exc}", EXIT_SERVER
                )
                if attempt + 1 < attempts:
                    self._sleep(attempt)
                continue
            if resp.status_code >= 500 or resp.status_code == 429:
                last = self._error(resp)
                if attempt + 1 < attempts:
                    self._sleep(attempt, resp.headers.get("Retry-After"))
                    continue
                raise last
            if resp.status_code >= 400:
                raise self._error(resp)
            return resp
        raise last  # type: ignore[misc]

    @staticmethod
    def _sleep(attempt: int, retry_after: str | None = None):
        try:
            delay = float(retry_after) if retry_after else 0.0
        except ValueError:
            delay = 0.0
        time.sleep(min(60.0, max(delay, (2**attempt) * 0.5 + random.random() * 0.25)))

    def _error(self, resp) -> ClientError:
        try:
            body = resp.json()
        except ValueError:
            body = resp.text
        detail, errors = _errors_from_body(body)
        prefix = {
            401: "not authenticated",
            403: "not allowed",
            404: "not found",
            413: "too large",
            429: "too many requests",
        }.get(resp.status_code, f"HTTP {resp.status_code}")
        if resp.status_code == 404 and not isinstance(body, dict):
            detail = f"{resp.request.method} {resp.url}"
        return ClientError(f"{prefix}: {detail}", _exit_code_for(resp.status_code), errors, body)

    def get(self, path: str, **params):
        return self.request("GET", path, params={k: v for k, v in params.items() if v is not None}).json()

    def get_all(self, path: str, **params) -> list:
        """Every item of a paginated list."""
        out: list[Any] = []
        data = self.get(path, **params)
        while True:
            if isinstance(data, list):
                return out + data
            out.extend(data.get("results", []))
            if not data.get("next"):
                return out
            data = self.request("GET", data["next"]).json()

    def post(self, path: str, *, idempotent: bool = False, **kwargs):
        return self.request("POST", path, idempotent=idempotent, **kwargs).json()
