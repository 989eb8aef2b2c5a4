from .submissions import META_FIELDS, Candidate, Submission, meta_limit
from .teams import Membership, Team
from .tokens import ApiToken

__all__ = ["META_FIELDS", "ApiToken", "Candidate", "Membership", "Submission", "Team", "meta_limit"]
