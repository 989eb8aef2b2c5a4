"""DRF authentication by ``Authorization: Bearer <token>`` against hashed per-user tokens."""

from django.utils import timezone
from rest_framework import authentication, exceptions, throttling

from submissions.models.tokens import ApiToken, hash_token

# Writing last_used_at on every request would serialise API traffic on one row.
_LAST_USED_GRANULARITY_S = 60


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Authorization header must be 'Bearer <token>'.")
        try:
            raw = header[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("Token contains invalid characters.") from None
        token = ApiToken.objects.select_related("user").filter(digest=hash_token(raw)).first()
        if token is None or not token.is_active:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("User inactive.")
        now = timezone.now()
        if token.last_used_at is None or (now - token.last_used_at).total_seconds() > _LAST_USED_GRANULARITY_S:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token

    def authenticate_header(self, request):
        return self.keyword


class TokenRateThrottle(throttling.SimpleRateThrottle):
    """Per-token rate limit (per user for session-authenticated API calls)."""

    scope = "token"

    def get_cache_key(self, request, view):
        if isinstance(request.auth, ApiToken):
            ident = f"tok{request.auth.pk}"
        elif request.user and request.user.is_authenticated:
            ident = f"user{request.user.pk}"
        else:
            return None
        return self.cache_format % {"scope": self.scope, "ident": ident}
