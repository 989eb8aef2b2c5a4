from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse

from portal.forms import SignupForm, TokenForm
from submissions.models import ApiToken
from submissions.views.post_only import post_only


def signup(request):
    if request.user.is_authenticated:
        return redirect("account")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, "Welcome! Create a team or join one to start submitting.")
        return redirect("account")
    return render(request, "registration/signup.html", {"form": form})


@login_required
def account(request):
    return render(
        request,
        "portal/account.html",
        {
            "memberships": request.user.memberships.select_related("team"),
            "tokens": request.user.api_tokens.all(),
            "token_form": TokenForm(),
        },
    )


@login_required
@post_only(lambda request, **_: reverse("account"))
def token_create(request):
    form = TokenForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Give the token a name (up to 80 characters).")
        return redirect("account")
    token, raw = ApiToken.issue(request.user, form.cleaned_data["name"])
    # Shown once, on this response only; the database keeps only its hash.
    return render(request, "portal/token_created.html", {"token": token, "raw": raw})


@login_required
@post_only(lambda request, **_: reverse("account"))
def token_revoke(request, pk):
    token = request.user.api_tokens.filter(pk=pk).first()
    if token is None:
        messages.error(request, "No such token.")
    else:
        token.revoke()
        messages.success(request, f"Token “{token.name}” revoked.")
    return redirect("account")
