from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

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
    list_display = (
        "id",
        "candidate",
        "hardware",
        "stage",
        "state",
        "outcome",
        "speedup",
        "workload_version",
        "harness_version",
        "attempts",
        "review_link",
    )
    list_filter = ("review", "state", "stage", "outcome", "hardware", "harness_version")
    raw_id_fields = ("candidate", "reused_from")
    # a review is decided on the review page only (audited, aggregates refreshed), never here
    readonly_fields = ("review", "reviewed_by", "reviewed_at", "review_note")

    @admin.display(description="review")
    def review_link(self, obj):
        if not obj.review:
            return ""
        label = "held: review it" if obj.is_held else obj.get_review_display()
        return format_html('<a href="{}">{}</a>', reverse("leaderboard:review-detail", args=[obj.pk]), label)


admin.site.register(Baseline)
admin.site.register(ExpertReference)
admin.site.register(WorkerHeartbeat)
