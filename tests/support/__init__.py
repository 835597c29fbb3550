"""What the tests share: real ``sabha run`` processes, fake servers (fakes/), boards on scripted models, a real
browser, throwaway PostgreSQL, and helpers per area."""
