"""The upload limits are defined once (jaxbench.limits) and every reader agrees with them."""

from jaxbench import limits
from jaxbench import traces as tf
from submissions import intake
from submissions.models import META_FIELDS, Submission, meta_limit


def test_metadata_limits_are_the_models_columns_and_the_trace_headers():
    header = {f.name: f for f in tf.HEADER_FIELDS}
    assert set(META_FIELDS) == set(limits.META_LIMITS)
    for field in META_FIELDS:
        assert meta_limit(field) == limits.META_LIMITS[field], field
        assert Submission._meta.get_field(field).max_length == limits.META_LIMITS[field], field
        assert header["model" if field == "model_name" else field].maximum == limits.META_LIMITS[field], field


def test_the_intake_and_the_trace_format_read_the_same_caps():
    assert intake.MAX_KERNEL_BYTES is limits.MAX_KERNEL_BYTES
    assert intake.MAX_ZIP_BYTES is limits.MAX_ZIP_BYTES
    assert tf.MAX_TRACE_BYTES is limits.MAX_TRACE_BYTES
    sample = {f.name: f for f in tf.SAMPLE_FIELDS}
    assert sample["code"].maximum == limits.MAX_CODE_CHARS == limits.MAX_KERNEL_BYTES
