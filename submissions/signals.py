"""What the submissions app tells the apps above it, without importing them.

``submission_stored`` is sent inside the intake's transaction once a submission and all its
candidates are written; ``submission`` is the saved row; ``background`` (default False) says it is
demo or maintenance work, to be evaluated only when no user's work waits. The evaluator answers by creating the
evaluation rows (same transaction) and waking the workers after the commit. Receivers' errors
propagate, so a failing receiver rolls the whole upload back: nothing is stored half-scheduled.

``test_run_promoted`` is sent inside the transaction that makes a test run an ordinary
submission (``submissions.intake.test_runs.promote_test_run``); the evaluator moves its
evaluations still to run from the background lane to the user lane."""

from django.dispatch import Signal

submission_stored = Signal()
test_run_promoted = Signal()
