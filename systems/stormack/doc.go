// Package stormack is being implemented; see its issue.
package stormack
