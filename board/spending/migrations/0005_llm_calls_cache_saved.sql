-- what prompt caching saved on a call, in USD at the price table's cache prices: cache reads at the
-- fresh input price minus what they cost, less the cache-write surcharge; NULL when the model has no price
ALTER TABLE llm_calls ADD COLUMN saved_usd REAL;
