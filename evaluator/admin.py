from django.contrib import admin

from catalog.models import Baseline, ExpertReference, HardwareTarget, Workload
from evaluator.models import Evaluation, WorkerHeartbeat

admin.site.register(HardwareTarget)


@admin.register(Workload)
class WorkloadAdmin(admin.ModelAdmin):
    list_display = ("wid", "title", "source", "model", "expert")

    def has_change_permission(self, request, obj=None):
        return False  # synced from the registry, never edited by hand


@admin.register(Evaluation)
class EvaluationAdmin(admin.ModelAdmin):
    list_display = ("id", "candidate", "hardware", "stage", "state", "outcome", "speedup", "attempts")
    list_filter = ("state", "stage", "outcome", "hardware")
    raw_id_fields = ("candidate", "reused_from")


admin.site.register(Baseline)
admin.site.register(ExpertReference)
admin.site.register(WorkerHeartbeat)
