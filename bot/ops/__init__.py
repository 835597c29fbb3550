"""Operations: what running Sabha as a service needs, one module per concern.

:mod:`.notify` (systemd's ``sd_notify`` protocol, written directly), :mod:`.metrics`
(Prometheus metrics on the daemon's own registry), :mod:`.readiness` (what ``/readyz``
checks), :mod:`.logs` (text or JSON log lines, secret redaction), :mod:`.runtime` (the
``daemon.json`` file that tells ``sabha status`` a daemon runs) and :mod:`.signals`
(a second SIGTERM / SIGINT exits at once). ``board`` knows none of this: it exposes
small observer hooks that these modules plug into.
"""
