// Package doccheck holds the tests that keep the project's documents true
// to the code: ARCHITECTURE.md names every package.
package doccheck
