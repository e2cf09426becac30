//! Where the flow keeps what it earned: client registrations and tokens, per authorization
//! server (its issuer) and resource.
//!
//! Keying by issuer is what SEP-2352 asks: when a resource moves to another authorization
//! server, the old server's client id and tokens are simply not found there, so the client
//! registers again instead of presenting them to a stranger. The store is a trait (a keyring,
//! a database, a binding's callback); [`MemoryStore`] is the default and [`FileStore`] keeps
//! one JSON file per key, readable by the user only (0600), for CLIs.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    sync::Mutex,
};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::token::{ClientCredentials, Tokens};
use crate::Error;

/// What is kept for one (issuer, resource) pair.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredAuth {
    /// The client's registration at the issuer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientCredentials>,
    /// The tokens for the resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Tokens>,
}

/// Keeps [`StoredAuth`] by key (`issuer` and resource, see [`store_key`]). Calls are rare and
/// small (once per authorization), so the trait is synchronous.
pub trait TokenStore: Send + Sync {
    /// The entry for `key`, if any.
    fn load(&self, key: &str) -> Result<Option<StoredAuth>, Error>;
    /// Replaces the entry for `key`.
    fn save(&self, key: &str, value: &StoredAuth) -> Result<(), Error>;
    /// Forgets `key`.
    fn remove(&self, key: &str) -> Result<(), Error>;
}

/// The key for an issuer and a resource.
pub fn store_key(issuer: &str, resource: &str) -> String {
    format!("{issuer} {resource}")
}

/// Keeps entries in memory (the default: nothing outlives the process).
#[derive(Debug, Default)]
pub struct MemoryStore {
    entries: Mutex<HashMap<String, StoredAuth>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        MemoryStore::default()
    }
}

impl TokenStore for MemoryStore {
    fn load(&self, key: &str) -> Result<Option<StoredAuth>, Error> {
        Ok(self
            .entries
            .lock()
            .map_err(|_| Error::Auth("the token store lock is poisoned".into()))?
            .get(key)
            .cloned())
    }

    fn save(&self, key: &str, value: &StoredAuth) -> Result<(), Error> {
        self.entries
            .lock()
            .map_err(|_| Error::Auth("the token store lock is poisoned".into()))?
            .insert(key.to_owned(), value.clone());
        Ok(())
    }

    fn remove(&self, key: &str) -> Result<(), Error> {
        self.entries
            .lock()
            .map_err(|_| Error::Auth("the token store lock is poisoned".into()))?
            .remove(key);
        Ok(())
    }
}

/// One JSON file per key in a directory; files are created 0600 and replaced atomically (a
/// crash mid-write leaves the old file), a directory it creates 0700.
#[derive(Debug, Clone)]
pub struct FileStore {
    dir: PathBuf,
}

impl FileStore {
    /// A store in `dir` (created if missing).
    pub fn new(dir: impl Into<PathBuf>) -> Result<Self, Error> {
        let dir = dir.into();
        if !dir.exists() {
            std::fs::create_dir_all(&dir)?;
            // Only a directory we created is narrowed: an existing one (a user's config
            // directory) keeps its mode; the files in it are 0600 either way.
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
            }
        }
        Ok(FileStore { dir })
    }

    /// The file of `key`: a hash, so no key can name a path outside the directory.
    pub fn path_of(&self, key: &str) -> PathBuf {
        let digest = Sha256::digest(key.as_bytes());
        let name: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("{name}.json"))
    }
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    use std::io::Write;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&tmp, path)?;
    Ok(())
}

impl TokenStore for FileStore {
    fn load(&self, key: &str) -> Result<Option<StoredAuth>, Error> {
        let path = self.path_of(key);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        #[derive(Deserialize)]
        struct File {
            key: String,
            #[serde(flatten)]
            value: StoredAuth,
        }
        let file: File = serde_json::from_slice(&bytes).map_err(|e| {
            Error::Auth(format!("the token file {} is corrupt: {e}", path.display()))
        })?;
        // A hash collision (or a file copied from elsewhere) is not our entry.
        Ok((file.key == key).then_some(file.value))
    }

    fn save(&self, key: &str, value: &StoredAuth) -> Result<(), Error> {
        let mut doc = serde_json::to_value(value).map_err(|e| Error::Auth(e.to_string()))?;
        doc["key"] = serde_json::Value::String(key.to_owned());
        let bytes = serde_json::to_vec_pretty(&doc).map_err(|e| Error::Auth(e.to_string()))?;
        write_private(&self.path_of(key), &bytes)
    }

    fn remove(&self, key: &str) -> Result<(), Error> {
        match std::fs::remove_file(self.path_of(key)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Tokens;

    #[test]
    fn the_file_store_is_private_and_survives_corruption() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("oxmcp-auth-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = FileStore::new(&dir).expect("store");
        let entry = StoredAuth {
            client: None,
            tokens: Some(Tokens {
                access_token: "at".into(),
                refresh_token: Some("rt".into()),
                expires_at: Some(1),
                scopes: vec!["a".into()],
            }),
        };
        store
            .save("https://as.example https://mcp.example/mcp", &entry)
            .expect("save");
        let path = store.path_of("https://as.example https://mcp.example/mcp");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the token file is readable by others");
        let dir_mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(dir_mode, 0o700);
        assert_eq!(
            store
                .load("https://as.example https://mcp.example/mcp")
                .unwrap(),
            Some(entry)
        );
        assert_eq!(store.load("another key").unwrap(), None);
        // A key that looks like a path stays inside the directory.
        assert!(store.path_of("../../etc/passwd").starts_with(&dir));
        std::fs::write(&path, b"{not json").unwrap();
        let e = store
            .load("https://as.example https://mcp.example/mcp")
            .unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Auth);
        store
            .remove("https://as.example https://mcp.example/mcp")
            .unwrap();
        assert_eq!(
            store
                .load("https://as.example https://mcp.example/mcp")
                .unwrap(),
            None
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
