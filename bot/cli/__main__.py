"""``python -m bot.cli``: the same as the ``sabha`` command."""

from bot.cli.main import main

raise SystemExit(main())
