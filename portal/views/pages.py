from django.conf import settings
from django.shortcuts import redirect, render
from django.templatetags.static import static

from catalog.models import Workload
from evaluator.health import status
from jaxbench.verdict import pallas_share
from leaderboard.columns import COLUMNS
from leaderboard.study import PUBLISHED_RESULTS


def home(request):
    return render(request, "portal/home.html", {"published": PUBLISHED_RESULTS})


def docs(request):
    pallas = {
        "required": settings.JAXBENCH_REQUIRE_PALLAS,
        "threshold": pallas_share.THRESHOLD,
        "allowances": [
            {"wid": wid, "share": share, "reason": reason}
            for wid, (share, reason) in sorted(pallas_share.OUTSIDE_ALLOWANCE.items())
        ],
    }
    public_file_notes = Workload.objects.exclude(public_file_note="").only("wid", "slug", "title", "public_file_note")
    return render(
        request,
        "portal/docs.html",
        {"pallas": pallas, "public_file_notes": public_file_notes, "board_columns": COLUMNS},
    )


def health(request):
    return render(request, "portal/health.html", {"status": status()})


def favicon(request):
    """Browsers ask for /favicon.ico whatever the page links: send them to the static icon
    (a temporary redirect: the hashed static name changes with the file)."""
    return redirect(static("favicon.svg"))
