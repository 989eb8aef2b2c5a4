import secrets

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils.text import slugify


def new_join_code() -> str:
    return secrets.token_urlsafe(12)


class Team(models.Model):
    name = models.CharField(max_length=80, unique=True)
    slug = models.SlugField(max_length=90, unique=True)
    description = models.CharField(max_length=300, blank=True)
    join_code = models.CharField(max_length=32, unique=True, default=new_join_code)
    created_at = models.DateTimeField(auto_now_add=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, through="Membership", related_name="teams")

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    def save(self, *args, **kwargs):
        if not self.slug:
            self.slug = slugify(self.name)[:90] or f"team-{secrets.token_hex(3)}"
        super().save(*args, **kwargs)

    def get_absolute_url(self):
        return reverse("submissions:team-detail", args=[self.slug])

    def role_of(self, user):
        if not user.is_authenticated:
            return None
        m = self.memberships.filter(user=user).first()
        return m.role if m else None

    def is_member(self, user) -> bool:
        return self.role_of(user) is not None

    def is_owner(self, user) -> bool:
        return self.role_of(user) == Membership.OWNER

    def rotate_join_code(self):
        self.join_code = new_join_code()
        self.save(update_fields=["join_code"])


class Membership(models.Model):
    OWNER = "owner"
    MEMBER = "member"
    ROLES = [(OWNER, "Owner"), (MEMBER, "Member")]

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=ROLES, default=MEMBER)
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["team", "user"], name="one_membership_per_team")]
        ordering = ["team", "-role", "joined_at"]

    def __str__(self):
        return f"{self.user} in {self.team} ({self.role})"
