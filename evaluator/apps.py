from django.apps import AppConfig


class EvaluatorConfig(AppConfig):
    name = "evaluator"
    verbose_name = "Evaluator"
