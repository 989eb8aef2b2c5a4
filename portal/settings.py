"""Django settings. Embedded default: SQLite + embedded Redis under var/. Production: set
DATABASE_URL and DRAMATIQ_BROKER_URL (see README)."""

import os
import pathlib

from jaxbench import environment
from portal.config import ConfigError, broker_config, database_config, secret_key

BASE_DIR = pathlib.Path(__file__).resolve().parent.parent
# pytest sets PYTEST_VERSION: tests (and the workers they start) keep their data apart.
TESTING = bool(os.environ.get("PYTEST_VERSION"))  # set by pytest itself, not a setting
VAR_DIR = pathlib.Path(environment.get("JAXBENCH_VAR_DIR") or BASE_DIR / "var" / ("test" if TESTING else ""))
EMBEDDED_REDIS_SOCKET = VAR_DIR / "redis" / "redis.sock"

try:
    SECRET_KEY = secret_key(VAR_DIR)
    DEBUG = environment.get("DJANGO_DEBUG")
    HTTPS = environment.get("DJANGO_HTTPS")
    REQUIRE_PALLAS = environment.get("JAXBENCH_REQUIRE_PALLAS")
    ALLOWED_HOSTS = environment.get("DJANGO_ALLOWED_HOSTS")
    CSRF_TRUSTED_ORIGINS = environment.get("DJANGO_CSRF_TRUSTED_ORIGINS")
    DATABASES = {
        "default": database_config(environment.get("DATABASE_URL"), VAR_DIR / "db.sqlite3", VAR_DIR / "test-db.sqlite3")
    }
    DRAMATIQ_BROKER = broker_config(environment.get("DRAMATIQ_BROKER_URL"), EMBEDDED_REDIS_SOCKET)
    if DRAMATIQ_BROKER["BROKER"].endswith("RedisBroker"):
        # dramatiq's own default is 60 s; a consumer heartbeats only while it has room to prefetch
        DRAMATIQ_BROKER["OPTIONS"]["heartbeat_timeout"] = int(
            environment.get("JAXBENCH_BROKER_HEARTBEAT_SECONDS") * 1000
        )
    EMAIL_BACKEND = environment.get("DJANGO_EMAIL_BACKEND")
    DEFAULT_FROM_EMAIL = environment.get("DJANGO_DEFAULT_FROM_EMAIL")
    API_RATES = {
        "token": environment.get("JAXBENCH_TOKEN_RATE"),
        "anon": environment.get("JAXBENCH_ANON_RATE"),
        "upload": environment.get("JAXBENCH_UPLOAD_RATE"),
    }
    # what the apps read of the environment, here only (the apps read django.conf.settings)
    JAXBENCH_LEASE_SECONDS = environment.get("JAXBENCH_LEASE_SECONDS")
    JAXBENCH_MAX_ATTEMPTS = environment.get("JAXBENCH_MAX_ATTEMPTS")
    JAXBENCH_EVALUATION_TIME_LIMIT_S = environment.get("JAXBENCH_EVALUATION_TIME_LIMIT_S")
    JAXBENCH_TIMEOUTS = environment.get("JAXBENCH_TIMEOUTS")
    JAXBENCH_RECONCILE_INTERVAL_SECONDS = environment.get("JAXBENCH_RECONCILE_INTERVAL_SECONDS")
    JAXBENCH_RECONCILE_STALE_SECONDS = environment.get("JAXBENCH_RECONCILE_STALE_SECONDS")
    JAXBENCH_WORKER_QUEUES = environment.get("JAXBENCH_WORKER_QUEUES")
    JAXBENCH_WORKER_HARDWARE = environment.get("JAXBENCH_WORKER_HARDWARE")
    JAXBENCH_BIND = environment.get("JAXBENCH_BIND")
    JAXBENCH_DEMO = environment.get("JAXBENCH_DEMO")
    HSTS_SECONDS = environment.get("DJANGO_HSTS_SECONDS")
    LOG_LEVEL = environment.get("JAXBENCH_LOG_LEVEL")
except ConfigError as exc:  # fail fast, with the message only
    raise SystemExit(f"jaxbench configuration error: {exc}") from None

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_dramatiq",
    "axes",
    # the layers, lowest first: each app imports only those above it in this list
    # (import-linter contracts in .importlinter, checked by tests/test_layers.py)
    "catalog",
    "submissions",
    "evaluator",
    "leaderboard",
    "portal",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "portal.urls"
WSGI_APPLICATION = "portal.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "portal.context.site",
            ]
        },
    }
]

DRAMATIQ_BROKER["MIDDLEWARE"] = [
    "dramatiq.middleware.AgeLimit",
    "dramatiq.middleware.TimeLimit",
    "dramatiq.middleware.Callbacks",
    "dramatiq.middleware.Retries",
    "dramatiq.middleware.ShutdownNotifications",
    "django_dramatiq.middleware.DbConnectionsMiddleware",
    "evaluator.worker_middleware.HardwareQueues",
    "evaluator.worker_middleware.CalmConsumers",  # after HardwareQueues: it reads the queues chosen there
    "evaluator.worker_middleware.SweepRunDirs",
    "evaluator.worker_middleware.KeepOffTimingCores",
    "evaluator.worker_middleware.Heartbeat",
    "evaluator.worker_middleware.Reconciler",
]
DRAMATIQ_AUTODISCOVER_MODULES = ["actors"]

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Login rate limiting: 5 failures per username and address, then a 15-minute cool-off.
AXES_ENABLED = not TESTING  # tests that exercise it turn it on
AXES_FAILURE_LIMIT = 5
AXES_COOLOFF_TIME = 0.25  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"


LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
MEDIA_ROOT = VAR_DIR / "media"
if TESTING:  # serve static files straight from the source folders, no collectstatic needed
    STORAGES["staticfiles"] = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}
    WHITENOISE_USE_FINDERS = True
    WHITENOISE_AUTOREFRESH = True
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # speed only; never in production

DATA_UPLOAD_MAX_MEMORY_SIZE = 64 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 8 * 1024 * 1024

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "submissions.tokens.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_THROTTLE_CLASSES": ["submissions.tokens.TokenRateThrottle", "rest_framework.throttling.AnonRateThrottle"],
    "DEFAULT_THROTTLE_RATES": {
        **API_RATES,
    },
    "EXCEPTION_HANDLER": "portal.api_errors.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "JAXBench Portal API",
    "DESCRIPTION": "Submit Pallas kernels and agent traces; read workloads, evaluations and the leaderboard.",
    "VERSION": "1.0.0",
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # how an entry's samples were chosen: as stored, and what a kernel upload may declare
    "ENUM_NAME_OVERRIDES": {
        "SelectionEnum": "jaxbench.traces.fields.SELECTION_CHOICES",
        "KernelSelectionEnum": "jaxbench.traces.fields.ONE_SAMPLE_SELECTIONS",
        "RunLogKindEnum": "portal.api.run_logs.RUN_LOG_KINDS",
        "SubmissionKindEnum": "submissions.models.Submission.KINDS",
    },
}

CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Evaluation settings.
JAXBENCH_REQUIRE_PALLAS = REQUIRE_PALLAS

# Production hardening whenever DEBUG is off and the site is served over HTTPS.
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
if HTTPS:
    SECURE_SSL_REDIRECT = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = HSTS_SECONDS
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
}
