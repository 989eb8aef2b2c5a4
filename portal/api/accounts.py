from drf_spectacular.utils import extend_schema
from rest_framework import permissions, serializers
from rest_framework.response import Response
from rest_framework.views import APIView


class MeSerializer(serializers.Serializer):
    username = serializers.CharField()
    teams = serializers.ListField(child=serializers.DictField())
    token = serializers.CharField(allow_null=True)


class MeView(APIView):
    """Who the token (or session) belongs to, and the teams it can submit for."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(responses=MeSerializer)
    def get(self, request):
        teams = [
            {"slug": m.team.slug, "name": m.team.name, "role": m.role}
            for m in request.user.memberships.select_related("team")
        ]
        token = getattr(request.auth, "name", None)
        return Response({"username": request.user.username, "teams": teams, "token": token})
