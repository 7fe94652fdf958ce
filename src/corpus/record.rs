//! One exported page (`Record`) and the columns an export can hold (`Field`): their names, their
//! order, their types in every format, and `--fields` parsing. docs/usage.md, "Export schema",
//! describes these columns; `Field::ALL` is the canonical order and `Field::DEFAULT` (all but
//! `markdown`) the default.

use super::CorpusError;

/// A column of the export.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Field {
    Id,
    Url,
    Host,
    Canonical,
    Lang,
    LangConfidence,
    Title,
    Published,
    Author,
    FromByline,
    FetchedAt,
    LastModified,
    Cluster,
    TemplateRatio,
    DupOf,
    Text,
    Markdown,
}

/// How a column is typed (JSON type / Parquet physical and logical type).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// JSON string; Parquet `BYTE_ARRAY (STRING)`, required.
    Str,
    /// JSON string or null; Parquet `BYTE_ARRAY (STRING)`, optional.
    OptStr,
    /// JSON number; Parquet `INT32 (UINT_32)`, required.
    U32,
    /// JSON number or null; Parquet `DOUBLE`, optional.
    OptF64,
}

impl Field {
    /// Every column, in the canonical order.
    pub const ALL: [Field; 17] = [
        Field::Id,
        Field::Url,
        Field::Host,
        Field::Canonical,
        Field::Lang,
        Field::LangConfidence,
        Field::Title,
        Field::Published,
        Field::Author,
        Field::FromByline,
        Field::FetchedAt,
        Field::LastModified,
        Field::Cluster,
        Field::TemplateRatio,
        Field::DupOf,
        Field::Text,
        Field::Markdown,
    ];

    /// The columns an export holds when `--fields` names none: all but `markdown` (the same
    /// text again, with its markup).
    pub const DEFAULT: [Field; 16] = [
        Field::Id,
        Field::Url,
        Field::Host,
        Field::Canonical,
        Field::Lang,
        Field::LangConfidence,
        Field::Title,
        Field::Published,
        Field::Author,
        Field::FromByline,
        Field::FetchedAt,
        Field::LastModified,
        Field::Cluster,
        Field::TemplateRatio,
        Field::DupOf,
        Field::Text,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Field::Id => "id",
            Field::Url => "url",
            Field::Host => "host",
            Field::Canonical => "canonical",
            Field::Lang => "lang",
            Field::LangConfidence => "lang_confidence",
            Field::Title => "title",
            Field::Published => "published",
            Field::Author => "author",
            Field::FromByline => "from_byline",
            Field::FetchedAt => "fetched_at",
            Field::LastModified => "last_modified",
            Field::Cluster => "cluster",
            Field::TemplateRatio => "template_ratio",
            Field::DupOf => "dup_of",
            Field::Text => "text",
            Field::Markdown => "markdown",
        }
    }

    pub fn kind(self) -> Kind {
        match self {
            Field::Id
            | Field::Url
            | Field::Host
            | Field::FetchedAt
            | Field::Text
            | Field::Markdown => Kind::Str,
            Field::Cluster => Kind::U32,
            Field::LangConfidence | Field::TemplateRatio => Kind::OptF64,
            Field::Canonical
            | Field::Lang
            | Field::Title
            | Field::Published
            | Field::Author
            | Field::FromByline
            | Field::LastModified
            | Field::DupOf => Kind::OptStr,
        }
    }

    /// `--fields`: comma-separated names, in the order wanted; `None` is every field.
    pub fn parse_list(list: Option<&str>) -> Result<Vec<Field>, CorpusError> {
        let Some(list) = list else {
            return Ok(Field::DEFAULT.to_vec());
        };
        let mut out = Vec::new();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let f = Field::ALL
                .into_iter()
                .find(|f| f.name() == name)
                .ok_or_else(|| CorpusError::UnknownField(name.to_string()))?;
            if out.contains(&f) {
                return Err(CorpusError::RepeatedField(name.to_string()));
            }
            out.push(f);
        }
        if out.is_empty() {
            return Err(CorpusError::NoFields);
        }
        Ok(out)
    }
}

/// One column's value in one record.
#[derive(Clone, Debug, PartialEq)]
pub enum Value<'a> {
    Str(&'a str),
    Null,
    U32(u32),
    F64(f64),
}

/// One exported page. Fields the export did not ask for stay at their defaults (`None`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Record {
    /// The page id as 16 hex digits (xxh3 of the normalised URL; the text export's file stem).
    pub id: String,
    pub url: String,
    /// The site key (`host` or `host:port`).
    pub host: String,
    pub canonical: Option<String>,
    /// ISO 639-3 code.
    pub lang: Option<&'static str>,
    pub lang_confidence: Option<f64>,
    pub title: Option<String>,
    pub published: Option<String>,
    pub author: Option<String>,
    /// Which of `author` and `published` were read from the page's byline (the short lines
    /// the cleaner dropped) because its markup states none: `author`, `published`,
    /// `author,published`, or `None` (from markup, or absent).
    pub from_byline: Option<&'static str>,
    /// RFC 3339, UTC, seconds.
    pub fetched_at: String,
    /// RFC 3339, UTC, from the HTTP `Last-Modified` header.
    pub last_modified: Option<String>,
    pub cluster: u32,
    pub template_ratio: Option<f64>,
    /// The id of the earlier page this one duplicates (`--dedup mark`).
    pub dup_of: Option<String>,
    pub text: String,
    /// The same text as Markdown (read only when asked for; a page cleaned before Markdown was
    /// stored has its plain text here).
    pub markdown: String,
}

impl Record {
    pub fn value(&self, f: Field) -> Value<'_> {
        fn opt(s: &Option<String>) -> Value<'_> {
            s.as_deref().map_or(Value::Null, Value::Str)
        }
        let num = |x: Option<f64>| x.map_or(Value::Null, Value::F64);
        match f {
            Field::Id => Value::Str(&self.id),
            Field::Url => Value::Str(&self.url),
            Field::Host => Value::Str(&self.host),
            Field::Canonical => opt(&self.canonical),
            Field::Lang => self.lang.map_or(Value::Null, Value::Str),
            Field::LangConfidence => num(self.lang_confidence),
            Field::Title => opt(&self.title),
            Field::Published => opt(&self.published),
            Field::Author => opt(&self.author),
            Field::FromByline => self.from_byline.map_or(Value::Null, Value::Str),
            Field::FetchedAt => Value::Str(&self.fetched_at),
            Field::LastModified => opt(&self.last_modified),
            Field::Cluster => Value::U32(self.cluster),
            Field::TemplateRatio => num(self.template_ratio),
            Field::DupOf => opt(&self.dup_of),
            Field::Text => Value::Str(&self.text),
            Field::Markdown => Value::Str(&self.markdown),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_parse_in_the_order_given_and_reject_unknown_or_repeated_names() {
        assert_eq!(Field::parse_list(None).unwrap(), Field::DEFAULT.to_vec());
        assert!(Field::ALL.starts_with(&Field::DEFAULT));
        assert_eq!(
            Field::parse_list(Some("id,markdown")).unwrap(),
            vec![Field::Id, Field::Markdown]
        );
        assert_eq!(
            Field::parse_list(Some("text, id,lang")).unwrap(),
            vec![Field::Text, Field::Id, Field::Lang]
        );
        assert!(matches!(
            Field::parse_list(Some("id,body")),
            Err(CorpusError::UnknownField(n)) if n == "body"
        ));
        assert!(matches!(
            Field::parse_list(Some("id,id")),
            Err(CorpusError::RepeatedField(_))
        ));
        assert!(matches!(
            Field::parse_list(Some(",")),
            Err(CorpusError::NoFields)
        ));
    }

    #[test]
    fn every_field_has_a_distinct_name_and_a_value() {
        let r = Record::default();
        let mut names: Vec<&str> = Field::ALL.iter().map(|f| f.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Field::ALL.len());
        for f in Field::ALL {
            let v = r.value(f);
            match f.kind() {
                Kind::Str => assert!(matches!(v, Value::Str(_)), "{f:?}"),
                Kind::U32 => assert!(matches!(v, Value::U32(_)), "{f:?}"),
                Kind::OptStr | Kind::OptF64 => assert_eq!(v, Value::Null, "{f:?}"),
            }
        }
    }
}
