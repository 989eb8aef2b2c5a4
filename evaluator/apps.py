from django.apps import AppConfig


class EvaluatorConfig(AppConfig):
    name = "evaluator"
    verbose_name = "Evaluator"

    def ready(self):
        from evaluator import receivers  # noqa: F401  (connects the receivers; needs the app registry)
