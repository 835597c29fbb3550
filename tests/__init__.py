"""Sabha's tests, laid out as the source is: tests/board/<package>/ beside board/<package>/, tests/bot/... beside
bot/..., whole-daemon tests in tests/system/, the project's own in tests/project/, shared helpers in
tests/support/."""
