//! The fixed parts of a .pptx package: one slide master, one layout, a notes
//! master, a theme and the small presentation property parts. Minimal, but
//! complete enough for PowerPoint, LibreOffice and python-pptx.

pub(crate) const NS: &str = concat!(
    r#"xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" "#,
    r#"xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" "#,
    r#"xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main""#
);

pub(crate) const DECL: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n";

/// The group-shape header every spTree starts with.
pub(crate) const TREE_HEADER: &str = concat!(
    r#"<p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr>"#,
    r#"<p:grpSpPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/><a:chOff x="0" y="0"/><a:chExt cx="0" cy="0"/></a:xfrm></p:grpSpPr>"#
);

const CLR_MAP: &str = concat!(
    r#"<p:clrMap bg1="lt1" tx1="dk1" bg2="lt2" tx2="dk2" accent1="accent1" accent2="accent2" accent3="accent3" "#,
    r#"accent4="accent4" accent5="accent5" accent6="accent6" hlink="hlink" folHlink="folHlink"/>"#
);

const BACKGROUND: &str = r#"<p:bg><p:bgRef idx="1001"><a:schemeClr val="bg1"/></p:bgRef></p:bg>"#;

/// A placeholder shape with a position and an empty paragraph.
fn placeholder(id: u32, name: &str, ph: &str, (x, y, cx, cy): (u64, u64, u64, u64)) -> String {
    format!(
        concat!(
            r#"<p:sp><p:nvSpPr><p:cNvPr id="{id}" name="{name}"/><p:cNvSpPr><a:spLocks noGrp="1"/></p:cNvSpPr>"#,
            r#"<p:nvPr>{ph}</p:nvPr></p:nvSpPr><p:spPr><a:xfrm><a:off x="{x}" y="{y}"/><a:ext cx="{cx}" cy="{cy}"/></a:xfrm>"#,
            r#"<a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr><p:txBody><a:bodyPr/><a:lstStyle/><a:p><a:endParaRPr lang="en-US"/></a:p></p:txBody></p:sp>"#
        ),
        id = id,
        name = name,
        ph = ph,
        x = x,
        y = y,
        cx = cx,
        cy = cy
    )
}

pub(crate) const TITLE_BOX: (u64, u64, u64, u64) = (838_200, 365_125, 10_515_600, 1_325_563);
pub(crate) const BODY_BOX: (u64, u64, u64, u64) = (838_200, 1_825_625, 10_515_600, 4_351_338);

pub(crate) fn slide_master() -> String {
    format!(
        concat!(
            "{decl}<p:sldMaster {ns}><p:cSld>{bg}<p:spTree>{tree}{title}{body}</p:spTree></p:cSld>{clr}",
            r#"<p:sldLayoutIdLst><p:sldLayoutId id="2147483649" r:id="rId1"/></p:sldLayoutIdLst>"#,
            "<p:txStyles><p:titleStyle><a:lvl1pPr algn=\"l\"><a:defRPr sz=\"4000\" b=\"1\"/></a:lvl1pPr></p:titleStyle>",
            r#"<p:bodyStyle><a:lvl1pPr marL="228600" indent="-228600"><a:buFont typeface="Arial"/><a:buChar char="&#8226;"/><a:defRPr sz="2000"/></a:lvl1pPr></p:bodyStyle>"#,
            "<p:otherStyle><a:lvl1pPr><a:defRPr sz=\"1800\"/></a:lvl1pPr></p:otherStyle></p:txStyles></p:sldMaster>"
        ),
        decl = DECL,
        ns = NS,
        bg = BACKGROUND,
        tree = TREE_HEADER,
        title = placeholder(
            2,
            "Title Placeholder 1",
            r#"<p:ph type="title"/>"#,
            TITLE_BOX
        ),
        body = placeholder(
            3,
            "Text Placeholder 2",
            r#"<p:ph type="body" idx="1"/>"#,
            BODY_BOX
        ),
        clr = CLR_MAP
    )
}

pub(crate) fn slide_layout() -> String {
    format!(
        concat!(
            r#"{decl}<p:sldLayout {ns} type="titleOnly" preserve="1"><p:cSld name="Title Only"><p:spTree>{tree}{title}</p:spTree></p:cSld>"#,
            "<p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sldLayout>"
        ),
        decl = DECL,
        ns = NS,
        tree = TREE_HEADER,
        title = placeholder(2, "Title 1", r#"<p:ph type="title"/>"#, TITLE_BOX)
    )
}

pub(crate) fn notes_master() -> String {
    format!(
        "{decl}<p:notesMaster {ns}><p:cSld>{bg}<p:spTree>{tree}{image}{body}</p:spTree></p:cSld>{clr}</p:notesMaster>",
        decl = DECL,
        ns = NS,
        bg = BACKGROUND,
        tree = TREE_HEADER,
        image = placeholder(
            2,
            "Slide Image Placeholder 1",
            r#"<p:ph type="sldImg" idx="2"/>"#,
            (685_800, 1_143_000, 5_486_400, 3_086_100)
        ),
        body = placeholder(
            3,
            "Notes Placeholder 2",
            r#"<p:ph type="body" idx="1"/>"#,
            (685_800, 4_400_550, 5_486_400, 3_600_450)
        ),
        clr = CLR_MAP
    )
}

pub(crate) fn theme() -> String {
    let accents = ["4472C4", "ED7D31", "A5A5A5", "FFC000", "5B9BD5", "70AD47"];
    let accents: String = accents
        .iter()
        .enumerate()
        .map(|(i, c)| {
            format!(
                r#"<a:accent{n}><a:srgbClr val="{c}"/></a:accent{n}>"#,
                n = i + 1
            )
        })
        .collect();
    let fill = r#"<a:solidFill><a:schemeClr val="phClr"/></a:solidFill>"#;
    let line = format!(r#"<a:ln w="6350">{fill}</a:ln>"#);
    let effect = "<a:effectStyle><a:effectLst/></a:effectStyle>";
    format!(
        concat!(
            r#"{decl}<a:theme xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" name="kts"><a:themeElements>"#,
            r#"<a:clrScheme name="kts"><a:dk1><a:sysClr val="windowText" lastClr="000000"/></a:dk1><a:lt1><a:sysClr val="window" lastClr="FFFFFF"/></a:lt1>"#,
            r#"<a:dk2><a:srgbClr val="44546A"/></a:dk2><a:lt2><a:srgbClr val="E7E6E6"/></a:lt2>{accents}"#,
            r#"<a:hlink><a:srgbClr val="0563C1"/></a:hlink><a:folHlink><a:srgbClr val="954F72"/></a:folHlink></a:clrScheme>"#,
            r#"<a:fontScheme name="kts"><a:majorFont><a:latin typeface="Calibri Light"/><a:ea typeface=""/><a:cs typeface=""/></a:majorFont>"#,
            r#"<a:minorFont><a:latin typeface="Calibri"/><a:ea typeface=""/><a:cs typeface=""/></a:minorFont></a:fontScheme>"#,
            r#"<a:fmtScheme name="kts"><a:fillStyleLst>{fill}{fill}{fill}</a:fillStyleLst><a:lnStyleLst>{line}{line}{line}</a:lnStyleLst>"#,
            r#"<a:effectStyleLst>{effect}{effect}{effect}</a:effectStyleLst><a:bgFillStyleLst>{fill}{fill}{fill}</a:bgFillStyleLst></a:fmtScheme>"#,
            r#"</a:themeElements><a:objectDefaults/><a:extraClrSchemeLst/></a:theme>"#
        ),
        decl = DECL,
        accents = accents,
        fill = fill,
        line = line,
        effect = effect
    )
}

pub(crate) fn pres_props() -> String {
    format!("{DECL}<p:presentationPr {NS}/>")
}

pub(crate) fn view_props() -> String {
    format!(
        r#"{DECL}<p:viewPr {NS}><p:normalViewPr><p:restoredLeft sz="15620"/><p:restoredTop sz="94660"/></p:normalViewPr><p:gridSpacing cx="76200" cy="76200"/></p:viewPr>"#
    )
}

pub(crate) fn table_styles() -> String {
    format!(
        r#"{DECL}<a:tblStyleLst xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" def="{{5C22544A-7EE6-4342-B048-85BDC9FD1C3A}}"/>"#
    )
}

pub(crate) fn app_xml(slides: usize) -> String {
    format!(
        concat!(
            r#"{decl}<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties" "#,
            r#"xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes">"#,
            "<Application>kts-sample</Application><Slides>{slides}</Slides></Properties>"
        ),
        decl = DECL,
        slides = slides
    )
}

pub(crate) const REL_NS: &str = "http://schemas.openxmlformats.org/package/2006/relationships";
pub(crate) const REL: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

/// A `.rels` part from (id, type suffix, target) triples; types are relative to [`REL`].
pub(crate) fn rels(entries: &[(String, &str, String)]) -> String {
    let body: String = entries
        .iter()
        .map(|(id, kind, target)| {
            let kind = if kind.starts_with("http") {
                kind.to_string()
            } else {
                format!("{REL}/{kind}")
            };
            format!(r#"<Relationship Id="{id}" Type="{kind}" Target="{target}"/>"#)
        })
        .collect();
    format!(r#"{DECL}<Relationships xmlns="{REL_NS}">{body}</Relationships>"#)
}
