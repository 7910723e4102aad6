import KeychainCore
import TeamStore

// kc-team: team keychains on PostgreSQL (docs/team.md). `kc team …` execs it; it is its own
// program so that the `kc` client links no PostgreSQL client.
print("kc-team: not yet")
