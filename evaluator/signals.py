"""What the evaluator tells the apps above it, without importing them.

``evaluation_finished`` is sent inside the verdict's transaction when an evaluation reaches its
final state (done, skipped, failed), and again when a staff member accepts or rejects a verdict
held for review (``evaluator.review``); ``evaluation`` is the locked row. Receivers run in that
transaction: an exception rolls the verdict back and the row is retried."""

from django.dispatch import Signal

evaluation_finished = Signal()
