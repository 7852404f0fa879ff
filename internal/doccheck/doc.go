// Package doccheck holds the tests that keep the project's documents true
// to the code: ARCHITECTURE.md names every package, and no document links to
// a path that is not in the repository.
package doccheck
