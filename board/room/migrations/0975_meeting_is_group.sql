-- A meeting remembers whether its place is a group (review finding 6): a follow-up convened there from
-- elsewhere (a /revisit sent from a direct chat or the web page) is still a group meeting, in the group's
-- memory scope. 1: a group, 0: a direct chat, NULL: a meeting recorded before this column.
ALTER TABLE meetings ADD COLUMN is_group INTEGER;
