"""Issue 23, item 7 on the leaderboard: each row's badge says how its samples were chosen, and
the board filters on it ("undeclared" for entries that never said)."""

from django.core.cache import cache

from submissions.models import Submission


def _lb(client, url):
    cache.clear()
    return client.get(url)


def test_rows_carry_a_selection_badge_and_the_board_filters_on_it(client, populated):
    a, b = populated["a"], populated["b"]
    Submission.objects.filter(pk=a.pk).update(selection="pass_at_k")
    Submission.objects.filter(pk=b.pk).update(selection="best_at_k", selector="its own timing")
    r = _lb(client, "/leaderboard/?hardware=cpu")
    rows = {row["submission"]: row for row in r.context["data"]["rows"]}
    assert rows[a.pk]["selection"] == "pass_at_k" and rows[b.pk]["selection"] == "best_at_k"
    html = r.content.decode()
    assert 'class="badge selection pass_at_k"' in html and ">pass@k</a>" in html
    assert 'class="badge selection best_at_k"' in html and "selector: its own timing" in html
    assert 'name="selection"' in html  # the filter
    r = _lb(client, "/leaderboard/?hardware=cpu&selection=best_at_k")
    assert [row["submission"] for row in r.context["data"]["rows"]] == [b.pk]
    assert "selection=best_at_k" in r.context["permalink"]
    r = _lb(client, "/leaderboard/?hardware=cpu&selection=undeclared")
    assert r.context["data"]["rows"] == []
    # an unknown value is no filter at all
    r = _lb(client, "/leaderboard/?hardware=cpu&selection=oracle")
    assert {row["submission"] for row in r.context["data"]["rows"]} == {a.pk, b.pk}
    # the export carries it too
    data = client.get("/leaderboard/?hardware=cpu&format=json").json()
    got = {row["submission"]: row["selection"] for row in data["rows"] if row["submission"] in (a.pk, b.pk)}
    assert got == {a.pk: "pass_at_k", b.pk: "best_at_k"}


def test_old_entries_are_undeclared_and_the_submission_page_says_so(client, populated):
    a = populated["a"]
    assert Submission.objects.get(pk=a.pk).selection == "undeclared"
    html = _lb(client, "/leaderboard/?hardware=cpu").content.decode()
    assert 'class="badge selection undeclared"' in html
    page = client.get(f"/submissions/{a.pk}/").content.decode()
    assert 'class="badge selection undeclared"' in page and "verified here" in page
    Submission.objects.filter(pk=a.pk).update(selection="single_attempt")
    page = client.get(f"/submissions/{a.pk}/").content.decode()
    assert ">single attempt</a>" in page
