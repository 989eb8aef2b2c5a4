"""OpenAPI description of the Bearer token authentication (drf-spectacular extension)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


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
