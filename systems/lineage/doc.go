// Package lineage is being implemented; see its issue.
package lineage
