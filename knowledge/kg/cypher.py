"""Cypher text shared by the Neo4j and FalkorDB adapters (every value is a ``$parameter``).

Both dialects run these verbatim. Nodes carry a ``tenant`` property: Neo4j isolates tenants by it
(constraint and every match include it); FalkorDB keeps one graph per tenant and the property is
redundant but harmless, which lets both share this text.
"""

from __future__ import annotations

from typing import Final

UPSERT_CHUNKS: Final = """
UNWIND $rows AS row
MERGE (c:Chunk {tenant: $tenant, id: row.id})
SET c.doc_id = row.doc_id, c.title = row.title, c.text = row.text, c.source = row.source,
    c.section_path = row.section_path
"""

MERGE_ENTITIES: Final = """
UNWIND $rows AS row
MERGE (e:Entity {tenant: $tenant, key: row.key})
ON CREATE SET e.name = row.name, e.type = row.type, e.aliases = row.aliases
ON MATCH SET e.aliases = e.aliases + [a IN row.aliases WHERE NOT a IN e.aliases AND a <> e.name],
             e.type = CASE WHEN row.type = 'title' THEN 'title' ELSE e.type END
"""

MERGE_MENTIONS: Final = """
UNWIND $rows AS row
MATCH (e:Entity {tenant: $tenant, key: row.key})
MATCH (c:Chunk {tenant: $tenant, id: row.chunk_id})
MERGE (e)-[:MENTIONED_IN]->(c)
"""

MERGE_RELATIONS: Final = """
UNWIND $rows AS row
MATCH (a:Entity {tenant: $tenant, key: row.src})
MATCH (b:Entity {tenant: $tenant, key: row.dst})
MERGE (a)-[r:RELATED {predicate: row.predicate}]->(b)
ON CREATE SET r.weight = row.weight, r.chunk_ids = row.chunk_ids
ON MATCH SET r.weight = r.weight + row.weight,
             r.chunk_ids = r.chunk_ids + [x IN row.chunk_ids WHERE NOT x IN r.chunk_ids]
"""

MERGE_SYNONYMS: Final = """
UNWIND $rows AS row
MATCH (a:Entity {tenant: $tenant, key: row.src})
MATCH (b:Entity {tenant: $tenant, key: row.dst})
MERGE (a)-[r:RELATED {predicate: row.predicate}]->(b)
SET r.weight = row.weight, r.chunk_ids = []
"""
"""Synonym edges are set, not summed: linking the same pair again leaves one edge of the same weight."""

ENTITY_NAMES: Final = """
MATCH (e:Entity {tenant: $tenant}) WHERE e.key > $after
RETURN e.key, e.name ORDER BY e.key LIMIT $limit
"""

DOC_CHUNK_IDS: Final = """
MATCH (c:Chunk {tenant: $tenant, doc_id: $doc_id}) RETURN c.id
"""

PRUNE_RELATIONS: Final = """
MATCH (:Entity {tenant: $tenant})-[r:RELATED]->(:Entity {tenant: $tenant})
WHERE any(x IN r.chunk_ids WHERE x IN $ids)
SET r.weight = r.weight * toFloat(size([x IN r.chunk_ids WHERE NOT x IN $ids])) / size(r.chunk_ids),
    r.chunk_ids = [x IN r.chunk_ids WHERE NOT x IN $ids]
"""

DELETE_UNSUPPORTED: Final = """
MATCH (:Entity {tenant: $tenant})-[r:RELATED]->(:Entity {tenant: $tenant})
WHERE size(r.chunk_ids) = 0 AND r.predicate <> $synonym
DELETE r
"""
"""Facts left without a source chunk go (two statements: FalkorDB drops a SET followed by a filtered DELETE);
synonym edges never had one and stay."""

DELETE_CHUNKS: Final = """
MATCH (c:Chunk {tenant: $tenant}) WHERE c.id IN $ids
DETACH DELETE c
"""

DELETE_ORPHANS: Final = """
MATCH (e:Entity {tenant: $tenant}) WHERE NOT (e)-[:MENTIONED_IN]->(:Chunk)
DETACH DELETE e
"""

ENTITIES_BY_KEY: Final = """
MATCH (e:Entity {tenant: $tenant}) WHERE e.key IN $keys
OPTIONAL MATCH (e)-[m:MENTIONED_IN]->(:Chunk)
RETURN e.key, e.name, e.type, count(m)
"""

NEIGHBOURHOOD: Final = """
MATCH (s:Entity {tenant: $tenant})-[r:RELATED]-(n:Entity {tenant: $tenant}) WHERE s.key IN $keys
WITH startNode(r) AS a, endNode(r) AS b, r
RETURN DISTINCT a.key AS src, b.key AS dst, r.predicate AS predicate, r.weight AS weight, r.chunk_ids AS chunk_ids
ORDER BY weight DESC, src, dst, predicate
LIMIT $limit
"""

MENTIONS: Final = """
MATCH (e:Entity {tenant: $tenant}) WHERE e.key IN $keys
MATCH (e)-[:MENTIONED_IN]->(c:Chunk)
WITH e, c ORDER BY c.id
WITH e, collect(c.id) AS ids
RETURN e.key, e.name, e.type, size(ids), ids[0..$per_entity]
"""

MENTIONS_SKIP_HUBS: Final = """
MATCH (e:Entity {tenant: $tenant}) WHERE e.key IN $keys
CALL {
  WITH e
  MATCH (e)-[:MENTIONED_IN]->(c:Chunk)
  RETURN c.id AS id LIMIT $cap
}
WITH e, collect(id) AS ids
RETURN e.key, e.name, e.type, size(ids), ids
"""
"""At most ``$cap`` (per_entity + 1) mentions an entity, read in storage order: an entity that has more is a hub,
and the caller drops its list (storage order is insertion order, which would favour the oldest documents)."""

CHUNKS_BY_ID: Final = """
MATCH (c:Chunk {tenant: $tenant}) WHERE c.id IN $ids
RETURN c.id, c.doc_id, c.title, c.text, c.source, c.section_path
"""

COUNT_ENTITIES: Final = "MATCH (e:Entity {tenant: $tenant}) RETURN count(e)"
COUNT_CHUNKS: Final = "MATCH (c:Chunk {tenant: $tenant}) RETURN count(c)"
COUNT_RELATIONS: Final = "MATCH (:Entity {tenant: $tenant})-[r:RELATED]->() RETURN count(r)"
COUNT_MENTIONS: Final = "MATCH (:Entity {tenant: $tenant})-[m:MENTIONED_IN]->() RETURN count(m)"

DROP_TENANT: Final = """
MATCH (n {tenant: $tenant}) DETACH DELETE n
"""
