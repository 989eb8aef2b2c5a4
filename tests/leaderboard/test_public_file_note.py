"""A workload whose public baseline.py cannot be uploaded unchanged says so, with what to
change, on its page and in the list on /docs/; the others say nothing."""

import re

import pytest

pytestmark = pytest.mark.django_db

NOTE = "The public file takes a fourth argument: replace the signature with `def workload(a, b, c):`."


def test_note_on_the_workload_page_and_on_docs(client, workloads):
    noted, plain = workloads[10], workloads[11]
    noted.public_file_note = NOTE
    noted.save(update_fields=["public_file_note"])

    html = client.get(f"/workloads/{noted.slug}/").content.decode()
    card = re.search(r'id="public-file-note">(.*?)</p>', html, re.S).group(1)
    assert "replace the signature with `def workload(a, b, c):`" in card
    assert 'id="public-file-note"' not in client.get(f"/workloads/{plain.slug}/").content.decode()

    docs = client.get("/docs/").content.decode()
    items = re.search(r'<ul id="public-file-notes">(.*?)</ul>', docs, re.S).group(1)
    assert f'href="/workloads/{noted.slug}/"' in items and "def workload(a, b, c):" in items
    assert plain.slug not in items


def test_docs_without_notes_say_every_public_file_runs_unchanged(client, workloads):
    docs = client.get("/docs/").content.decode()
    assert 'id="public-files"' in docs and 'id="public-file-notes"' not in docs
    assert "upload unchanged" in docs
