from django.shortcuts import render


def home(request):
    from leaderboard.metrics import PUBLISHED_RESULTS
    return render(request, "portal/home.html", {"published": PUBLISHED_RESULTS})


def docs(request):
    return render(request, "portal/docs.html")


def health(request):
    from evaluator.health import status
    return render(request, "portal/health.html", {"status": status()})
