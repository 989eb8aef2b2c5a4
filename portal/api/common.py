"""Shared pieces of the v1 API: the JSON Lines parser, the upload throttle and the conversion of
bad input (oversized, malformed, suspicious requests; intake errors) into clear 4xx bodies."""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from rest_framework import exceptions, pagination, parsers, status
from rest_framework.response import Response

from submissions.intake import IntakeError
from submissions.tokens import TokenRateThrottle

NDJSON_TYPES = ("application/x-ndjson", "application/jsonl")
# raw-body trace uploads: JSON Lines, or one JSON document (an ATIF trajectory, an ADK session)
RAW_TRACE_TYPES = (*NDJSON_TYPES, "application/json")


class JSONLinesParser(parsers.BaseParser):
    """``application/x-ndjson`` bodies are not parsed here: the view streams them line by line
    into the intake. ``request.data`` is ``{"trace": <stream>}``."""

    media_type = "application/x-ndjson"

    def parse(self, stream, media_type=None, parser_context=None):
        return {"trace": stream}


class JSONLParser(JSONLinesParser):
    media_type = "application/jsonl"


class TrajectoryJSONParser(JSONLinesParser):
    """An ATIF trajectory or ADK session sent as the raw ``application/json`` body of the trace
    upload: streamed into the intake (which sniffs the format), not parsed here."""

    media_type = "application/json"


class UploadRateThrottle(TokenRateThrottle):
    """Uploads are heavier than reads: a separate per-token rate (``JAXBENCH_UPLOAD_RATE`` or
    ``DEFAULT_THROTTLE_RATES["upload"]``, default 120/hour)."""

    scope = "upload"

    def get_rate(self):
        rates = settings.REST_FRAMEWORK.get("DEFAULT_THROTTLE_RATES", {})
        return rates.get("upload") or settings.API_RATES["upload"]


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request is too large."
    default_code = "too_large"


class ClearErrorsMixin:
    """Bad input never becomes a 5xx."""

    def handle_exception(self, exc):
        if isinstance(exc, IntakeError):
            return Response(exc.as_dict(), status=status.HTTP_400_BAD_REQUEST)
        if isinstance(exc, RequestDataTooBig):
            exc = PayloadTooLarge(
                f"The request body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE // (1024 * 1024)} "
                f"MB; upload files as multipart or a trace as application/x-ndjson."
            )
        elif isinstance(exc, SuspiciousOperation):
            exc = exceptions.ParseError(f"Malformed request: {exc}")
        elif isinstance(exc, UnicodeDecodeError):
            exc = exceptions.ParseError("Malformed request: not UTF-8.")
        return super().handle_exception(exc)


class EvaluationPagination(pagination.PageNumberPagination):
    """``?page=`` and ``?page_size=`` (at most 250): an evaluation carries its whole record, and
    1,000 of them took ~0.2 s to serialize on SQLite, over the 100 ms any visitor's request gets
    (benchmarks/endpoints_load.py); a larger page size is clamped to this, and ``next`` follows."""

    page_size_query_param = "page_size"
    max_page_size = 250
