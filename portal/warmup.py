"""A web worker's first request, paid before it serves one.

Django imports the URLconf (every view module, DRF, drf-spectacular) and compiles each template
on first use, builds its URL reverse tables and loads the translation catalogues, so the first request a freshly started worker answered cost ~0.5 s more than any
later one (issue 34 item 8: 470-525 ms for the leaderboard after a restart). ``warm_up`` does that
work when the WSGI application is built (``portal.wsgi``), before the worker accepts a request.
It touches no database: under ``gunicorn --preload`` it runs in the master, whose connections
the forked workers must not share.
"""

from __future__ import annotations

import gc
import pathlib

from django.apps import apps
from django.conf import settings
from django.core.cache import caches
from django.db import DatabaseError, connections, router
from django.template import TemplateDoesNotExist, TemplateSyntaxError, engines
from django.template.backends.django import DjangoTemplates
from django.template.loader import get_template
from django.urls import get_resolver
from django.utils import formats, translation
from django.utils.module_loading import import_string


def warm_up() -> None:
    resolver = get_resolver()
    resolver.url_patterns  # noqa: B018 - importing the URLconf imports every view
    _populate(resolver)
    translation.gettext("")  # loads the default language's catalogues (the first {% url %} did)
    for template in project_templates():
        try:
            get_template(template)  # compiled into the cached loader
        except (TemplateDoesNotExist, TemplateSyntaxError):
            continue  # a page with a broken template fails on its own request, as before
    _first_use()
    # What was just built lives as long as the process: out of the collector's sight, so that the
    # full collections a request's garbage sets off do not walk it (~0.1 s each, measured)
    gc.collect()
    gc.freeze()


def _first_use() -> None:
    """What the first request built or imported besides (``benchmarks/endpoints_load.py``'s
    fresh worker, ~15 ms of CPU on SQLite): the SQL compiler module, the cache backend, the
    template context processors, the message storage and session serializer, the locale's
    formats and every model's field maps. None of it opens a database connection."""
    for alias in connections:
        connections[alias].ops.compiler("SQLCompiler")  # imports the backend's compiler module
    for alias in settings.CACHES:
        caches[alias]
    for engine in engines.all():
        if isinstance(engine, DjangoTemplates):
            engine.engine.template_context_processors  # noqa: B018 - imported on first render
    import_string(settings.MESSAGE_STORAGE)
    import_string(settings.SESSION_SERIALIZER)
    formats.get_format("DATE_FORMAT")  # imports the locale's formats module
    for model in apps.get_models(include_auto_created=True):
        opts = model._meta
        opts.get_fields()
        opts.fields_map  # noqa: B018 - the cached maps a query's name lookups read
        opts._forward_fields_map  # noqa: B018
        opts.concrete_fields  # noqa: B018
        opts.local_concrete_fields  # noqa: B018
        opts.db_returning_fields  # noqa: B018
        opts._property_names  # noqa: B018


def warm_connections() -> None:
    """This process's database connections, opened and primed before its first request. A
    fresh worker's first page paid 35-45 ms more SQL time than its second on a new connection
    (PostgreSQL's new backend reads its catalogue for every table and index a query is planned
    over; SQLite reads its schema), which put the PostgreSQL fresh worker's staff submission page
    over its 100 ms budget. One row-less query per table does that reading. Only in a process
    that forks nothing after it (gunicorn's ``post_worker_init``, ``portal/gunicorn_hooks.py``):
    a connection open across a fork would be shared by the children. A persistent connection
    (``CONN_MAX_AGE``) keeps the priming until the connection's age ends it."""
    for alias in connections:
        for model in apps.get_models(include_auto_created=True):
            if not model._meta.managed or model._meta.proxy or not router.allow_migrate_model(alias, model):
                continue
            try:
                model._base_manager.using(alias).exists()
            except DatabaseError:
                break  # not migrated yet, or unreachable: the first request says so, as before


def _populate(resolver) -> None:
    """Build the reverse lookup tables ``{% url %}`` reads, of every namespace."""
    resolver.reverse_dict  # noqa: B018 - built on first access
    for _, child in resolver.namespace_dict.values():
        _populate(child)


def project_templates() -> list[str]:
    """The names of the templates in the project's template directories."""
    names = []
    for engine in settings.TEMPLATES:
        for root in map(pathlib.Path, engine.get("DIRS", [])):
            names += sorted(str(p.relative_to(root)) for p in root.rglob("*.html"))
    return names
