"""Several ``sabha run`` processes on one state (PostgreSQL): who is running, and who polls Telegram.

* :mod:`bot.replicas.registry` -- this replica's row in ``replicas`` (name, host, pid, since) and its heartbeat;
  alive = seen within ``replicas.lease_s``;
* :mod:`bot.replicas.leader` -- the one Telegram poller, elected by a PostgreSQL advisory lock;
* :mod:`bot.replicas.service` -- both together, as the daemon runs them;
* :mod:`bot.replicas.status` -- what ``sabha status`` shows about replicas, leases and the backlog.
"""
