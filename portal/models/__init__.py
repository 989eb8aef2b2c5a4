from .submissions import Candidate, Submission
from .teams import Membership, Team
from .tokens import ApiToken

__all__ = ["ApiToken", "Candidate", "Membership", "Submission", "Team"]
