from django.apps import AppConfig
from django.db.models.signals import post_migrate


class PortalConfig(AppConfig):
    name = "portal"
    verbose_name = "Accounts and site pages"

    def ready(self):
        from portal.sqlite_stats import analyse_tables_missing_index_statistics  # deferred: needs the app registry

        post_migrate.connect(analyse_tables_missing_index_statistics, dispatch_uid="portal-sqlite-statistics")
