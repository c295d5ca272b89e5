// The test ClickHouse servers (the runner's, its cluster's and `npm run test:servers`') delete
// merged-away parts 20 s after a merge instead of 8 minutes. Every insert of a test is a part of
// its own, 26 files for a session index row, and ClickHouse keeps the parts a merge replaced for
// `old_parts_lifetime`, so that a power cut cannot lose a merge not yet on disk: a test server
// has no use for that. Over a whole run 95 % of the part folders were such leftovers, and
// removing the run's folder at its end took 30 s; now the servers delete them as they go.
export const SHORT_LIVED_MERGED_PARTS = {
  'merged-parts.xml': `<?xml version="1.0"?>
<yandex>
  <merge_tree>
    <old_parts_lifetime>20</old_parts_lifetime>
  </merge_tree>
</yandex>
`,
};
