from django.urls import path

from catalog import views

app_name = "catalog"
urlpatterns = [
    path("workloads/<slug:slug>/starter.py", views.workload_starter, name="workload-starter"),
]
