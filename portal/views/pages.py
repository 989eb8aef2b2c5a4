from django.shortcuts import render


def home(request):
    from leaderboard.metrics import PUBLISHED_RESULTS
    return render(request, "portal/home.html", {"published": PUBLISHED_RESULTS})


def docs(request):
    from django.conf import settings

    from evaluator.bench import pallas_share
    pallas = {"required": settings.JAXBENCH_REQUIRE_PALLAS, "threshold": pallas_share.THRESHOLD,
              "allowances": [{"wid": wid, "share": share, "reason": reason}
                             for wid, (share, reason) in sorted(pallas_share.OUTSIDE_ALLOWANCE.items())]}
    from evaluator.models import Workload
    public_file_notes = Workload.objects.exclude(public_file_note="").only("wid", "slug", "title", "public_file_note")
    return render(request, "portal/docs.html", {"pallas": pallas, "public_file_notes": public_file_notes})


def health(request):
    from evaluator.health import status
    return render(request, "portal/health.html", {"status": status()})
