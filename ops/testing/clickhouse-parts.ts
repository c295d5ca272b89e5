// The test ClickHouse deletes merged-away parts 20 s after a merge instead of 8 minutes. Every
// insert of a test is a part of its own, 26 files for a session index row, and merges leave the
// old ones on disk for `old_parts_lifetime` (kept so that a power cut cannot lose a merge not yet
// on disk, which a test server has no use for). Over a whole run 95 % of the part folders were
// such leftovers, and removing the run's folder at its end took some 30 s on this project's
// machines; now the server deletes them as it goes, beside the tests.
export const SHORT_LIVED_MERGED_PARTS = {
  'merged-parts.xml': `<?xml version="1.0"?>
<yandex>
  <merge_tree>
    <old_parts_lifetime>20</old_parts_lifetime>
  </merge_tree>
</yandex>
`,
};
