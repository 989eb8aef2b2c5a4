import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create the 'admin' superuser on first run; its password is written to var/admin-password.txt."

    def handle(self, *args, **opts):
        User = get_user_model()
        path = settings.VAR_DIR / "admin-password.txt"
        if User.objects.filter(is_superuser=True).exists():
            if path.exists():
                self.stdout.write(f"admin user exists; its first password is in {path}")
            return
        password = secrets.token_urlsafe(12)
        User.objects.create_superuser("admin", "admin@localhost", password)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(password + "\n")
        path.chmod(0o600)
        self.stdout.write(self.style.SUCCESS(f"created superuser 'admin'; password in {path}"))
