"""The review gate: proposals, the decisions that wait on the user, how an accepted write
lands, and the turn as the tools and the gate see it."""
