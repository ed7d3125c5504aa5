"""The one ceiling every test wait shares.

A test waits for a condition (an element's state, an event set, a record final, a server answering),
never for a span of time; ``CEILING_S`` is only how long a condition may take before the test takes it
never to come. CI runs beside other work on two cores, so it is minutes, not seconds: a slower machine
makes a test slower, not red.
"""

from __future__ import annotations

CEILING_S = 300
