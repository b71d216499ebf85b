// Package snapshot is being implemented; see its issue.
package snapshot
