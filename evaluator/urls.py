from django.urls import path

from evaluator.views import workloads

urlpatterns = [
    path("workloads/", workloads.workload_list, name="workload-list"),
    path("workloads/<slug:slug>/", workloads.workload_detail, name="workload-detail"),
    path("workloads/<slug:slug>/starter.py", workloads.workload_starter, name="workload-starter"),
]
