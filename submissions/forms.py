"""The web forms of the submissions app: /submit/ (they gather input; ``submissions.intake``
validates and stores it) and the team pages."""

import copy
import secrets

from django import forms
from django.utils.text import slugify

from catalog.models import HardwareTarget
from jaxbench.limits import MAX_KERNEL_BYTES, TEST_RUN_MAX_KERNELS
from jaxbench.traces import ONE_SAMPLE_SELECTIONS as KERNEL_SELECTIONS
from jaxbench.traces import SELECTION_HELP, SELECTION_LABELS, format_error
from submissions.intake import IntakeError, Upload, teams_for
from submissions.models import Team, meta_limit


def new_upload_key() -> str:
    """A per-form key: a resubmitted page (reload, double click) returns the first submission."""
    return "web-" + secrets.token_urlsafe(18)


class _TeamMixin:
    def _add_team_field(self, user):
        teams = teams_for(user)
        self.fields["team"] = forms.ModelChoiceField(
            queryset=teams,
            to_field_name="slug",
            empty_label=None,
            label="Team",
            help_text="The team the submission belongs to; it stays private to the team until published.",
        )
        if len(teams) == 1:
            self.fields["team"].widget = forms.HiddenInput()
            self.fields["team"].initial = teams[0].slug
        self.order_fields(["team"] + [f for f in self.fields if f != "team"])

    def error_summary(self) -> list[dict]:
        """Every error of a failed form, in field order, for the summary at the top of the
        page: ``{"anchor", "label", "message"}`` (the anchor is the field's input; a hidden
        field's, or an error of the whole form, points at the form itself)."""
        out = []
        for e in self.non_field_errors():
            out.append({"anchor": self.form_anchor, "label": "", "message": e})
        for bf in self:
            for e in bf.errors:
                anchor = self.form_anchor if bf.is_hidden else bf.id_for_label
                out.append({"anchor": anchor, "label": bf.label, "message": e})
        return out

    def chosen_files(self) -> list[str]:
        """Names of the files the failed upload carried: a browser never keeps a file input's
        choice across pages, so the summary says which files to choose again."""
        files = getattr(self, "files", None) or {}
        return [f.name for key in files for f in files.getlist(key)]

    def add_intake_errors(self, exc: IntakeError, field_map=None):
        """Show every intake error next to the field that carried it (a file row, the zip, a
        meta field), the rest above the form."""
        field_map = field_map or {}
        for e in exc.errors:
            target = e.get("input") or field_map.get(e.get("field"), e.get("field"))
            if target in self.fields:
                text = f"{e['file']}: {e['message']}" if e.get("file") and e.get("input") else e["message"]
                if e.get("line") is not None:
                    text = format_error({k: v for k, v in e.items() if k not in ("input", "file")})
                self.add_error(target, text)
            else:
                self.add_error(None, format_error(e))


class KernelSubmissionForm(_TeamMixin, forms.Form):
    hardware = forms.ModelChoiceField(
        queryset=HardwareTarget.objects.all(),
        to_field_name="slug",
        empty_label=None,
        label="Hardware target",
        help_text="Where the kernels are evaluated and ranked.",
    )
    method = forms.CharField(
        max_length=meta_limit("method"),
        widget=forms.TextInput(attrs={"list": "known-methods"}),
        help_text="Pick one or type your own.",
    )
    model = forms.CharField(
        max_length=meta_limit("model_name"),
        required=False,
        label="Model",
        widget=forms.TextInput(attrs={"list": "known-models"}),
        help_text="The model that wrote the kernels, if any.",
    )
    description = forms.CharField(
        required=False, max_length=meta_limit("description"), widget=forms.Textarea(attrs={"rows": 3})
    )
    link = forms.URLField(required=False, max_length=meta_limit("link"), help_text="Paper, code or write-up.")
    selection = forms.ChoiceField(
        required=False,
        label="How were these files chosen?",
        choices=[("", "undeclared")] + [(c, f"{SELECTION_LABELS[c]}: {SELECTION_HELP[c]}") for c in KERNEL_SELECTIONS],
        help_text='Agent entries say what they are (<a href="/docs/#selection">why</a>).',
    )
    selector = forms.CharField(
        required=False,
        max_length=meta_limit("selector"),
        label="Selector (best@k)",
        help_text="How one file per workload was picked among k, without any verdict of this portal.",
    )
    upload_key = forms.CharField(required=False, max_length=meta_limit("upload_key"), widget=forms.HiddenInput())
    zip = forms.FileField(
        required=False,
        label="Or one .zip archive",
        help_text="&lt;workload&gt;.py files, or folders named by workload holding one .py "
        "each (12p_RMSNorm/optimized.py): a directory of Autocomp or public-harness "
        "outputs uploads as it is. baseline.py, hidden files and non-.py files are "
        "skipped.",
    )

    def __init__(self, *args, user, workloads, **kwargs):
        super().__init__(*args, **kwargs)
        self._add_team_field(user)
        self.fields["hardware"].label_from_instance = lambda h: f"{h.slug} — {h.name}"
        if "cpu" in {h.slug for h in self.fields["hardware"].queryset}:
            self.fields["hardware"].initial = "cpu"
        self.fields["upload_key"].initial = new_upload_key()
        self.workloads = list(workloads)
        for w in self.workloads:
            self.fields[f"file_{w.wid}"] = forms.FileField(
                required=False,
                label=f"{w.wid} {w.title}",
                widget=forms.ClearableFileInput(attrs={"accept": ".py,text/x-python"}),
            )

    def meta_fields(self):
        """The visible fields above the file rows (team, hardware, method, model, ...)."""
        return [bf for bf in self.visible_fields() if not bf.name.startswith("file_") and bf.name != "zip"]

    def rows(self):
        """(workload, bound file field) per workload, for the table of the form."""
        return [(w, self[f"file_{w.wid}"]) for w in self.workloads]

    form_anchor = "kernel-form"

    def clean(self):
        data = super().clean()
        file_fields = [f"file_{w.wid}" for w in self.workloads] + ["zip"]
        if any(name in self.errors for name in file_fields):
            return data  # a chosen file was refused (empty, ...): its own error says so
        if not any(data.get(f"file_{w.wid}") for w in self.workloads) and not data.get("zip"):
            raise forms.ValidationError("Choose at least one kernel file, or a .zip of them.")
        return data

    def uploads(self):
        out = [
            Upload(f.name, f, workload=w.wid, input=f"file_{w.wid}")
            for w in self.workloads
            if (f := self.cleaned_data.get(f"file_{w.wid}"))
        ]
        if self.cleaned_data.get("zip"):
            z = self.cleaned_data["zip"]
            out.append(Upload(z.name, z, input="zip", archive=True))
        return out

    def meta(self):
        d = self.cleaned_data
        return {
            "method": d["method"],
            "model_name": d.get("model", ""),
            "description": d.get("description", ""),
            "link": d.get("link", ""),
            "selection": d.get("selection", ""),
            "selector": d.get("selector", ""),
            "upload_key": d.get("upload_key") or None,
        }


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files in one input (Django's documented pattern): cleans to a list."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        one = super().clean
        if isinstance(data, (list, tuple)) and data:
            return [one(d, initial) for d in data]
        if data and not isinstance(data, (list, tuple)):
            return [one(data, initial)]
        one(None, initial)  # "This field is required." when it is
        return []


class TestRunForm(_TeamMixin, forms.Form):
    """A test run: a few kernel files evaluated privately (``submissions.intake.create_test_run``)."""

    hardware = forms.ModelChoiceField(
        queryset=HardwareTarget.objects.all(),
        to_field_name="slug",
        empty_label=None,
        label="Hardware target",
        help_text="Where the kernels are evaluated, and the board the preview places them on.",
    )
    files = MultipleFileField(
        label=f"Kernel files (.py, at most {TEST_RUN_MAX_KERNELS})",
        widget=MultipleFileInput(attrs={"accept": ".py,.zip,text/x-python,application/zip"}),
        help_text=f"Each named by its workload (12p.py, 12p_RMSNorm.py), or one .zip of them; at most "
        f"{MAX_KERNEL_BYTES // 1024} KB each.",
    )
    workload = forms.ChoiceField(
        required=False,
        label="Workload (one file)",
        help_text="For a single file whose name does not say its workload.",
    )

    form_anchor = "test-run-form"

    def __init__(self, *args, user, workloads, **kwargs):
        super().__init__(*args, **kwargs)
        self._add_team_field(user)
        self.fields["team"].help_text = "The team it would be submitted for; only you see the test run."
        self.fields["hardware"].label_from_instance = lambda h: f"{h.slug} — {h.name}"
        if "cpu" in {h.slug for h in self.fields["hardware"].queryset}:
            self.fields["hardware"].initial = "cpu"
        self.fields["workload"].choices = [("", "(as the file name says)")] + [
            (w.wid, f"{w.wid} {w.title}") for w in workloads
        ]

    def clean(self):
        data = super().clean()
        files = data.get("files") or []
        if data.get("workload") and len(files) > 1:
            self.add_error("workload", "name the workload only for a single file; name several files by workload")
        return data

    def uploads(self):
        files = self.cleaned_data["files"]
        workload = self.cleaned_data.get("workload") or None
        return [Upload(f.name, f, workload=workload if len(files) == 1 else None, input="files") for f in files]


class PromoteTestRunForm(_TeamMixin, forms.Form):
    """The "Submit for the board" form: what a kernel submission says about itself (the kernel
    form's own fields), and whether to publish at once. (The team is the test run's: no team field.)"""

    META = ("method", "model", "description", "link", "selection", "selector")

    publish = forms.BooleanField(
        required=False,
        label="Publish on the board now",
        help_text="Otherwise it is private to your team until you publish it (My submissions).",
    )

    form_anchor = "promote-form"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in self.META:
            self.fields[name] = copy.deepcopy(KernelSubmissionForm.base_fields[name])
        self.order_fields([*self.META, "publish"])

    def meta(self) -> dict:
        d = self.cleaned_data
        return {
            "method": d["method"],
            "model_name": d.get("model", ""),
            "description": d.get("description", ""),
            "link": d.get("link", ""),
            "selection": d.get("selection", ""),
            "selector": d.get("selector", ""),
        }


class TraceUploadForm(_TeamMixin, forms.Form):
    trace = forms.FileField(
        label="Trace file (.jsonl or .json)",
        widget=forms.ClearableFileInput(attrs={"accept": ".jsonl,.ndjson,.json,application/x-ndjson,application/json"}),
        help_text='A <a href="/docs/trace-format/">jaxbench-trace/1</a> JSON Lines file (its '
        "header names the method, model, hardware and sampling), or a trajectory as the agent "
        'framework wrote it: <a href="/docs/trace-format/#trajectories">ATIF or a Google ADK session</a>.',
    )
    upload_key = forms.CharField(
        required=False,
        max_length=meta_limit("upload_key"),
        label="Upload key (optional)",
        help_text="Uploading again with the same key returns the first submission.",
    )
    # ATIF and ADK trajectories only: what the document does not say (jaxbench.traces.UPLOAD_OPTIONS)
    hardware = forms.ModelChoiceField(
        queryset=HardwareTarget.objects.all(),
        to_field_name="slug",
        required=False,
        empty_label="(as the file says)",
        label="Hardware target (ATIF/ADK)",
        help_text="For an ATIF or ADK trajectory that does not declare it; a jaxbench-trace/1 header names its own.",
    )
    workload = forms.CharField(
        required=False,
        max_length=120,
        label="Workload (ATIF/ADK)",
        help_text="For a single-workload trajectory whose kernels name no workload, e.g. 12p.",
    )
    method = forms.CharField(
        required=False,
        max_length=meta_limit("method"),
        label="Method (ATIF/ADK)",
        help_text="Default: the agent's (or ADK app's) name.",
    )

    form_anchor = "trace-form"

    def __init__(self, *args, user, **kwargs):
        # its own ids: the kernel form on the same page also has a team and an upload key
        kwargs.setdefault("auto_id", "trace_id_%s")
        super().__init__(*args, **kwargs)
        self._add_team_field(user)
        self.fields["hardware"].label_from_instance = lambda h: f"{h.slug} — {h.name}"

    def trajectory_options(self) -> dict:
        """The upload's hardware, workload and method for an ATIF or ADK trajectory (empty: unset)."""
        d = self.cleaned_data
        hw = d.get("hardware")
        return {"hardware": hw.slug if hw else None, "workload": d.get("workload"), "method": d.get("method")}

    def add_trace_errors(self, exc: IntakeError):
        """Trace errors name a line (or a trajectory's JSON path): they go next to the file
        field; those of the form's own fields next to them."""
        for e in exc.errors:
            if e.get("line") is None and e.get("field") in ("team", "upload_key", "hardware", "workload", "method"):
                self.add_error(e["field"], e["message"])
            else:
                self.add_error("trace", format_error(e))


class TeamForm(forms.ModelForm):
    class Meta:
        model = Team
        fields = ("name", "description")

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        if not slugify(name):
            raise forms.ValidationError("The name needs at least one letter or digit.")
        if Team.objects.filter(slug=slugify(name)[:90]).exists():
            raise forms.ValidationError("A team with this name already exists.")
        return name


class JoinTeamForm(forms.Form):
    code = forms.CharField(max_length=32, label="Join code")

    def clean_code(self):
        code = self.cleaned_data["code"].strip()
        team = Team.objects.filter(join_code=code).first()
        if team is None:
            raise forms.ValidationError("No team has this join code (it may have been rotated).")
        self.team = team
        return code
