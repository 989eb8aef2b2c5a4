"""gunicorn's settings for the portal's web server (``gunicorn -c python:portal.gunicorn_hooks``):
what each worker does after it has loaded the application, before it accepts a request."""


def post_worker_init(worker) -> None:
    """The worker's database connections, opened and primed (``portal.warmup``) after the fork:
    the application (and its ``warm_up``) may be loaded in the master under ``--preload``."""
    from portal.warmup import warm_connections  # deferred: Django is set up by the application's load

    warm_connections()
