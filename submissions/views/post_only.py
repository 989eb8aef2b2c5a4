"""POST-only URLs that answer a GET with their form's page, not a blank 405: after a failed
upload the browser's address bar holds the POST URL (/submit/trace/), and a reload or a
pasted link is a GET."""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.http import HttpResponseNotAllowed
from django.shortcuts import redirect


def post_only(form_page: Callable[..., str]):
    """Like ``require_POST``, except that GET and HEAD are redirected to
    ``form_page(request, *args, **kwargs)``: the URL of the page that holds the form."""

    def decorate(view):
        @functools.wraps(view)
        def wrapper(request, *args, **kwargs):
            if request.method in ("GET", "HEAD"):
                return redirect(form_page(request, *args, **kwargs))
            if request.method != "POST":
                return HttpResponseNotAllowed(["POST"])
            return view(request, *args, **kwargs)

        return wrapper

    return decorate
