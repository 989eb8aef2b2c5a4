"""Clear 4xx bodies for the API, and never a stack trace for bad input."""

import logging

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_handler

log = logging.getLogger(__name__)


def exception_handler(exc, context):
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(exc.message_dict if hasattr(exc, "error_dict") else exc.messages)
    response = drf_handler(exc, context)
    if response is not None:
        return response
    if isinstance(exc, (UnicodeDecodeError, ValueError)):
        return Response({"detail": f"Bad request: {exc.__class__.__name__}"}, status=status.HTTP_400_BAD_REQUEST)
    log.exception("unhandled API error")
    return Response({"detail": "Internal error; it has been logged."}, status=status.HTTP_500_INTERNAL_SERVER_ERROR)
