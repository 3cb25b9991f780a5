//! The state trie's shape and branch hashing (the JS twin is ts/state/trie.ts; both must give the same
//! root for the same key set). 16-ary radix trie over 32-byte key hashes, each leaf at the shortest
//! prefix unique to it; leaves carry the leaf hash computed by the caller:
//!   leaf hash   = sha256(0x00 || key_hash || value)        (computed in JS, batched)
//!   branch hash = sha256(0x01 || bitmap u16 BE || present children's hashes in nibble order)
//! Updates mark the path dirty; root() re-hashes dirty branches level by level, each level in parallel.

use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Keys are already uniform hashes: their first 8 bytes are a fine map hash (SipHash costs ~3x more).
#[derive(Default)]
struct KeyHasher(u64);
impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut b = [0u8; 8];
        let n = bytes.len().min(8);
        b[..n].copy_from_slice(&bytes[..n]);
        self.0 ^= u64::from_le_bytes(b);
    }
}
type KeyMap = HashMap<[u8; 32], u32, BuildHasherDefault<KeyHasher>>;

const NONE: u32 = u32::MAX;

enum Node {
    Branch {
        children: [u32; 16],
        hash: [u8; 32],
        dirty: bool,
        parent: u32,
        slot: u8,
    },
    Leaf {
        key: [u8; 32],
        hash: [u8; 32],
        parent: u32,
        slot: u8,
    },
    Free,
}

pub struct Trie {
    nodes: Vec<Node>,
    free: Vec<u32>,
    leaves: KeyMap,
}

#[inline]
fn nibble(h: &[u8; 32], depth: usize) -> usize {
    let b = h[depth >> 1];
    (if depth & 1 == 1 { b & 15 } else { b >> 4 }) as usize
}

impl Trie {
    pub fn new() -> Trie {
        let root = Node::Branch {
            children: [NONE; 16],
            hash: [0; 32],
            dirty: true,
            parent: NONE,
            slot: 0,
        };
        Trie {
            nodes: vec![root],
            free: Vec::new(),
            leaves: KeyMap::default(),
        }
    }

    pub fn len(&self) -> usize {
        self.leaves.len()
    }

    fn alloc(&mut self, n: Node) -> u32 {
        if let Some(i) = self.free.pop() {
            self.nodes[i as usize] = n;
            i
        } else {
            self.nodes.push(n);
            (self.nodes.len() - 1) as u32
        }
    }

    fn parent_of(&self, i: u32) -> u32 {
        match &self.nodes[i as usize] {
            Node::Branch { parent, .. } | Node::Leaf { parent, .. } => *parent,
            Node::Free => NONE,
        }
    }

    fn set_parent(&mut self, i: u32, p: u32, s: u8) {
        match &mut self.nodes[i as usize] {
            Node::Branch { parent, slot, .. } | Node::Leaf { parent, slot, .. } => {
                *parent = p;
                *slot = s;
            }
            Node::Free => {}
        }
    }

    /// Mark branch `i` and its ancestors dirty (stops at the first dirty one: its ancestors are too).
    fn dirty_up(&mut self, mut i: u32) {
        while i != NONE {
            match &mut self.nodes[i as usize] {
                Node::Branch { dirty, parent, .. } => {
                    if *dirty {
                        return;
                    }
                    *dirty = true;
                    i = *parent;
                }
                _ => return,
            }
        }
    }

    fn child(&self, b: u32, n: usize) -> u32 {
        match &self.nodes[b as usize] {
            Node::Branch { children, .. } => children[n],
            _ => NONE,
        }
    }

    fn set_child(&mut self, b: u32, n: usize, c: u32) {
        if let Node::Branch { children, .. } = &mut self.nodes[b as usize] {
            children[n] = c;
        }
        if c != NONE {
            self.set_parent(c, b, n as u8);
        }
    }

    pub fn set(&mut self, key: &[u8; 32], leaf_hash: &[u8; 32]) {
        if let Some(&i) = self.leaves.get(key) {
            let parent = match &mut self.nodes[i as usize] {
                Node::Leaf { hash, parent, .. } => {
                    *hash = *leaf_hash;
                    *parent
                }
                _ => NONE,
            };
            self.dirty_up(parent);
            return;
        }
        let mut node = 0u32;
        let mut depth = 0usize;
        self.dirty_up(0);
        loop {
            if let Node::Branch { dirty, .. } = &mut self.nodes[node as usize] {
                *dirty = true;
            }
            let n = nibble(key, depth);
            let c = self.child(node, n);
            if c == NONE {
                let leaf = self.alloc(Node::Leaf {
                    key: *key,
                    hash: *leaf_hash,
                    parent: node,
                    slot: n as u8,
                });
                self.set_child(node, n, leaf);
                self.leaves.insert(*key, leaf);
                return;
            }
            let other_key = match &self.nodes[c as usize] {
                Node::Branch { .. } => None,
                Node::Leaf { key, .. } => Some(*key),
                Node::Free => unreachable!("free node linked in the trie"),
            };
            match other_key {
                None => {
                    node = c;
                    depth += 1;
                }
                Some(ok) => {
                    // Two leaves share this prefix: push the existing one a level down and retry there.
                    let split = self.alloc(Node::Branch {
                        children: [NONE; 16],
                        hash: [0; 32],
                        dirty: true,
                        parent: node,
                        slot: n as u8,
                    });
                    self.set_child(split, nibble(&ok, depth + 1), c);
                    self.set_child(node, n, split);
                    node = split;
                    depth += 1;
                }
            }
        }
    }

    pub fn delete(&mut self, key: &[u8; 32]) -> bool {
        let Some(leaf) = self.leaves.remove(key) else { return false };
        let (mut branch, slot) = match &self.nodes[leaf as usize] {
            Node::Leaf { parent, slot, .. } => (*parent, *slot as usize),
            _ => return false,
        };
        self.nodes[leaf as usize] = Node::Free;
        self.free.push(leaf);
        self.set_child(branch, slot, NONE);
        self.dirty_up(branch);
        if let Node::Branch { dirty, .. } = &mut self.nodes[branch as usize] {
            *dirty = true;
        }
        // Collapse upward so the shape stays canonical (the root never collapses).
        while branch != 0 {
            let (children, parent, bslot) = match &self.nodes[branch as usize] {
                Node::Branch {
                    children, parent, slot, ..
                } => (*children, *parent, *slot as usize),
                _ => return true,
            };
            let present: Vec<u32> = children.iter().copied().filter(|&c| c != NONE).collect();
            if present.is_empty() {
                self.set_child(parent, bslot, NONE);
            } else if present.len() == 1 && matches!(self.nodes[present[0] as usize], Node::Leaf { .. }) {
                self.set_child(parent, bslot, present[0]);
            } else {
                break;
            }
            self.nodes[branch as usize] = Node::Free;
            self.free.push(branch);
            branch = parent;
        }
        true
    }

    fn node_hash(&self, i: u32) -> &[u8; 32] {
        match &self.nodes[i as usize] {
            Node::Branch { hash, .. } | Node::Leaf { hash, .. } => hash,
            Node::Free => unreachable!("free node linked in the trie"),
        }
    }

    fn preimage(&self, children: &[u32; 16], out: &mut Vec<u8>) {
        let mut bitmap: u16 = 0;
        out.clear();
        out.extend_from_slice(&[1, 0, 0]);
        for (i, &c) in children.iter().enumerate() {
            if c != NONE {
                bitmap |= 1 << (15 - i);
                out.extend_from_slice(self.node_hash(c));
            }
        }
        out[1..3].copy_from_slice(&bitmap.to_be_bytes());
    }

    /// Re-hash the dirty branches, deepest level first, each level in parallel.
    pub fn root(&mut self) -> [u8; 32] {
        let mut levels: Vec<Vec<u32>> = Vec::new();
        let mut stack: Vec<(u32, usize)> = vec![(0, 0)];
        while let Some((b, d)) = stack.pop() {
            let Node::Branch { children, dirty, .. } = &self.nodes[b as usize] else {
                continue;
            };
            if !*dirty {
                continue;
            }
            if levels.len() <= d {
                levels.resize_with(d + 1, Vec::new);
            }
            levels[d].push(b);
            for &c in children.iter() {
                if c != NONE && matches!(self.nodes[c as usize], Node::Branch { dirty: true, .. }) {
                    stack.push((c, d + 1));
                }
            }
        }
        for level in levels.iter().rev() {
            let this = &*self;
            let hashes: Vec<[u8; 32]> = level
                .par_iter()
                .with_min_len(256)
                .map_init(Vec::new, |buf, &b| {
                    if let Node::Branch { children, .. } = &this.nodes[b as usize] {
                        this.preimage(children, buf);
                    }
                    let mut h = [0u8; 32];
                    h.copy_from_slice(&Sha256::digest(&buf[..]));
                    h
                })
                .collect();
            for (&b, h) in level.iter().zip(hashes) {
                if let Node::Branch { hash, dirty, .. } = &mut self.nodes[b as usize] {
                    *hash = h;
                    *dirty = false;
                }
            }
        }
        *self.node_hash(0)
    }

    /// Membership proof steps from the root down: per level bitmap u16 BE, nibble u8, sibling count u8,
    /// then the siblings' hashes. None when the key is absent. Call root() first.
    pub fn prove(&self, key: &[u8; 32]) -> Option<Vec<u8>> {
        let mut node = *self.leaves.get(key)?;
        let mut steps: Vec<Vec<u8>> = Vec::new();
        loop {
            let parent = self.parent_of(node);
            if parent == NONE {
                break;
            }
            let (children, slot) = match (&self.nodes[parent as usize], &self.nodes[node as usize]) {
                (Node::Branch { children, .. }, Node::Branch { slot, .. } | Node::Leaf { slot, .. }) => (*children, *slot),
                _ => return None,
            };
            let mut step = vec![0u8, 0, slot, 0];
            let mut bitmap: u16 = 0;
            let mut count = 0u8;
            for (i, &c) in children.iter().enumerate() {
                if c == NONE {
                    continue;
                }
                bitmap |= 1 << (15 - i);
                if i != slot as usize {
                    step.extend_from_slice(self.node_hash(c));
                    count += 1;
                }
            }
            step[0..2].copy_from_slice(&bitmap.to_be_bytes());
            step[3] = count;
            steps.push(step);
            node = parent;
        }
        steps.reverse();
        Some(steps.concat())
    }
}
