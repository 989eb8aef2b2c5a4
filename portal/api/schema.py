"""The OpenAPI document: the Bearer token authentication's description (a drf-spectacular
extension), and the schema view that generates the document once per process."""

from typing import ClassVar

from django.utils import translation
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.views import SpectacularAPIView
from rest_framework.response import Response


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "submissions.tokens.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "jxb_…",
            "description": "A per-user API token from your account page: `Authorization: Bearer <token>`.",
        }


class SchemaView(SpectacularAPIView):
    """``/api/schema/``, generated once per process, version and language: the document is the
    code's, the same for every visitor, and generating it took ~50 ms a request (0.6 s the
    first time); only its rendering (YAML or JSON) is left to each request."""

    _generated: ClassVar[dict[tuple, dict]] = {}

    def _get_schema_response(self, request):
        version = self.api_version or request.version or self._get_version_parameter(request)
        key = (version, translation.get_language(), self.serve_public)
        schema = self._generated.get(key)
        if schema is None:
            generator = self.generator_class(urlconf=self.urlconf, api_version=version, patterns=self.patterns)
            schema = self._generated[key] = generator.get_schema(request=request, public=self.serve_public)
        return Response(
            data=schema,
            headers={"Content-Disposition": f'inline; filename="{self._get_filename(request, version)}"'},
        )
