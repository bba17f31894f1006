package seed

// The demo's words: three publications with their people, sections and stories, and the pools
// that bodies, promos and review notes are assembled from. Everything here is fiction written
// to look like a working newsroom, so the dashboard and the API have something real to show.

type person struct {
	Local string // the part of the address before "@"
	Name  string
}

type collection struct {
	Slug, Name, Kind, Description string
}

type story struct {
	Title, Section, Summary string
}

type tableRow struct{ Label, Value string }

type link struct{ Text, URL string }

type snippet struct{ Heading, Lang, Code string }

type projectSpec struct {
	Slug, Name, Timezone, Domain string
	Channels                     []string
	Lead, Editor, Reviewer       person
	Viewer                       person
	Collections                  []collection
	Stories                      []story
	Ledes                        []string // paragraphs that follow the summary
	Points                       []string // list items
	TableHead                    [2]string
	Rows                         []tableRow
	Snippets                     []snippet
	Links                        []link
	Hashtags                     []string
	// BulkSubjects are the topics of generated titles in large sets.
	BulkSubjects []string
}

// multiUser belongs to two projects with different roles, so the dashboard's project switcher
// and per-project permissions have someone to show them.
var multiUser = struct {
	Email, Name string
	Roles       map[string]string // project slug → role
}{
	Email: "multi@masthead.test",
	Name:  "Morgan Lee",
	Roles: map[string]string{"northwind": "reviewer", "acme-travel": "lead"},
}

var projects = []projectSpec{
	{
		Slug: "northwind", Name: "Northwind Daily", Timezone: "Europe/London", Domain: "northwind.test",
		Channels: []string{"x", "bluesky", "mastodon", "linkedin", "threads"},
		Lead:     person{"lead", "Nadia Okafor"}, Editor: person{"editor", "Tom Reyes"},
		Reviewer: person{"reviewer", "Priya Nair"}, Viewer: person{"viewer", "Sam Whitfield"},
		Collections: []collection{
			{"city", "City", "section", "Council, transport, housing and the services the city runs."},
			{"business", "Business", "section", "Jobs, the port, the high street and the cost of living."},
			{"culture", "Culture", "section", "Stage, screen, galleries and the people behind them."},
			{"sport", "Sport", "section", "Results and stories from pitch, river and rink."},
			{"election-2026", "Election 2026", "campaign", "Everything about the **mayoral election**: candidates, debates and how to vote."},
		},
		Stories: []story{
			{"Council approves riverside housing plan after late-night vote", "city", "Councillors backed 1,200 new homes on the old gasworks site by 31 votes to 24."},
			{"Tram line extension to Eastgate opens next spring", "city", "The 3.4 km extension adds four stops and cuts the trip to the centre to twelve minutes."},
			{"Northwind library adds Sunday hours at three branches", "city", "Central, Harbourside and Eastgate libraries will open from 11:00 to 16:00 on Sundays."},
			{"What the new parking zones mean for your street", "city", "Permit zones expand to six more neighbourhoods in April; here is how to check yours."},
			{"Storm damage: how the harbour wall held", "city", "Engineers credit the 2019 reinforcement for keeping the old town dry during Storm Edda."},
			{"Recycling collections move to a fortnightly schedule", "city", "Mixed recycling will be collected every other week from June, food waste still weekly."},
			{"Inside the night shift at Northwind General", "city", "We spent a night with the emergency team as winter pressure builds."},
			{"Bridge repairs close Mill Lane for six weeks", "city", "Diversions run via Station Road; buses 4 and 11 change route."},
			{"Local bakery chain expands to five new neighbourhoods", "business", "Crumb & Co. will open five shops and hire 60 staff by the end of the year."},
			{"Port traffic hits a ten-year high", "business", "Container volumes rose 14% as two new shipping lines added Northwind to their routes."},
			{"Start-up hub opens in the old textile mill", "business", "The renovated mill offers 140 desks and a lab for hardware start-ups."},
			{"High street vacancies fall for the first time since 2019", "business", "One in nine shops stands empty, down from one in seven a year ago."},
			{"Why energy bills are rising again this winter", "business", "The price cap goes up 6%; we explain what drives it and where to find help."},
			{"Fishing co-operative signs first export deal", "business", "Northwind's 38 boats will supply langoustine to restaurants in Lyon and Milan."},
			{"Farmers' market moves indoors for the winter", "business", "From November the Saturday market trades in the Corn Exchange."},
			{"Jazz festival returns to the harbour front", "culture", "Forty acts over three days, with free stages on the quay."},
			{"Museum unveils restored Viking longboat", "culture", "Six years of conservation bring the 9th-century boat back on display."},
			{"Review: The Lighthouse Keeper at the Royal Theatre", "culture", "A tense, beautifully lit two-hander that earns its standing ovation."},
			{"Ten murals worth a detour this weekend", "culture", "From the gasworks wall to the ferry terminal, a walking route in pictures."},
			{"Northwind Film Club celebrates 50 years", "culture", "The club that started in a church hall now runs the city's only arthouse cinema."},
			{"Poetry trail links the city's hidden courtyards", "culture", "Twelve poems set in stone lead walkers through the old town."},
			{"Northwind Rovers seal promotion with a stoppage-time winner", "sport", "A 94th-minute header sends the Rovers up after eleven seasons."},
			{"Marathon route changes: what runners need to know", "sport", "The course now finishes on the quay and avoids the Mill Lane works."},
			{"Rowing club welcomes its first adaptive crew", "sport", "Four rowers with disabilities will race at the regional regatta in May."},
			{"Youth league faces pitch shortage", "sport", "Clubs say 30 teams have nowhere to train on weekday evenings."},
			{"Ice rink reopens after a two-year refit", "sport", "The rink gains a new roof, seating for 2,000 and public skating every evening."},
			{"Candidates clash over bus fares in first debate", "election-2026", "Fare caps, tram delays and the riverside plan dominated the first hustings."},
			{"Where each mayoral candidate stands on housing", "election-2026", "We asked all five candidates the same six questions."},
			{"How to register to vote before the deadline", "election-2026", "You have until 17 April to register; it takes five minutes online."},
			{"Polling stations: what changes this year", "election-2026", "Eleven polling stations move and photo ID is now required."},
			{"Turnout in the last three elections, ward by ward", "election-2026", "Harbourside votes most, Eastgate least: the numbers behind the gap."},
			{"Fact check: claims from the mayoral hustings", "election-2026", "We checked nine claims made on stage; four hold up."},
			{"School meals programme extended to all primary pupils", "city", "Every primary pupil gets a free hot lunch from September."},
			{"New cycle lanes: a month of data", "city", "Bike counts on Station Road doubled; car journey times barely moved."},
			{"Harbour ferry timetable changes from March", "city", "Ferries run every 20 minutes at peak times and later on Fridays."},
			{"Letters: readers on the riverside plan", "city", "A selection of the 300 letters we received about the gasworks homes."},
		},
		Ledes: []string{
			"The decision follows months of consultation in which more than 2,000 residents responded. Supporters say the city cannot wait any longer; opponents warn that roads and schools are already stretched.",
			"Officials say the change is part of a wider plan to make the city easier to live in without a car, and that the details will be reviewed after six months.",
			"For people who live and work nearby, the practical effects will be felt first on weekday mornings, when traffic and footfall peak.",
			"It is the latest in a series of changes that have reshaped the harbour district since the ferry terminal was rebuilt.",
			"Those involved describe a long process with setbacks along the way, but say the result is worth the wait.",
			"The announcement was welcomed by community groups, though several asked for clearer timetables and more detail on costs.",
		},
		Points: []string{
			"Work starts in the spring and is due to finish within 18 months.",
			"The council will publish quarterly progress reports.",
			"Residents can comment at the public meeting on **12 March**.",
			"The total cost is estimated at £14.2m, two thirds from national funds.",
			"Bus routes 4 and 11 are affected; others run as normal.",
			"A dedicated helpline opens next week.",
			"Existing permits remain valid until they expire.",
			"Opposition councillors have asked for an independent review.",
		},
		TableHead: [2]string{"Measure", "Figure"},
		Rows: []tableRow{
			{"Homes planned", "1,200"}, {"Affordable share", "35%"}, {"Budget", "£14.2m"},
			{"Consultation responses", "2,134"}, {"Months of work", "18"}, {"Jobs created", "240"},
		},
		Snippets: []snippet{
			{"Embed the live results", "html", "<iframe src=\"https://data.northwind.test/embed/results?ward=all\"\n        title=\"Live election results\" width=\"100%\" height=\"420\" loading=\"lazy\"></iframe>"},
			{"How we counted", "sql", "select ward, count(*) as responses\nfrom consultation_responses\nwhere submitted_at >= date '2026-01-01'\ngroup by ward\norder by responses desc;"},
			{"Get the data", "bash", "curl -s https://data.northwind.test/api/v1/datasets/cycle-counts.csv \\\n  | head -n 20"},
		},
		Links: []link{
			{"Council meeting papers", "https://northwind.test/council/meetings"},
			{"Our election guide", "https://northwind.test/election-2026"},
			{"Open data portal", "https://data.northwind.test/"},
			{"How we report", "https://northwind.test/about/standards"},
		},
		Hashtags: []string{"#Northwind", "#LocalNews", "#NorthwindElection"},
		BulkSubjects: []string{
			"council budget", "harbour works", "bus timetable", "school places", "housing waiting list",
			"street lighting", "river clean-up", "library funding", "port jobs", "market traders",
			"cycle lanes", "youth football", "theatre season", "night buses", "flood defences",
		},
	},
	{
		Slug: "acme-travel", Name: "Acme Travel", Timezone: "America/New_York", Domain: "acme.test",
		Channels: []string{"instagram", "facebook", "x", "threads"},
		Lead:     person{"lead", "Lena Fischer"}, Editor: person{"editor", "Marco Bianchi"},
		Reviewer: person{"reviewer", "Aisha Rahman"}, Viewer: person{"viewer", "Jon Park"},
		Collections: []collection{
			{"destinations", "Destinations", "section", "Cities, coasts and mountains, tried and tested."},
			{"guides", "Guides", "section", "Practical advice: packing, money, health and the small print."},
			{"deals", "Deals", "section", "Offers our team has checked, with the conditions spelled out."},
			{"summer-escapes", "Summer Escapes", "campaign", "The **summer campaign**: beaches, lakes, night trains and festivals."},
		},
		Stories: []story{
			{"Lisbon in 48 hours: trams, tiles and custard tarts", "destinations", "Two days, one tram pass and more pastéis de nata than we will admit to."},
			{"The quiet side of Kyoto: temples before breakfast", "destinations", "Beat the crowds by starting at six; here is the route we walked."},
			{"Island-hopping the Azores on a budget", "destinations", "Four islands in ten days for under €1,200, ferries included."},
			{"Why Ljubljana is Europe's most walkable capital", "destinations", "A car-free centre, river terraces and a castle fifteen minutes on foot."},
			{"A week on the Norwegian coast by ferry", "destinations", "From Bergen to the Lofoten Islands aboard the coastal express."},
			{"Marrakech for first-timers", "destinations", "How to navigate the medina, what to pay and where to rest."},
			{"Hiking the Dolomites hut to hut", "destinations", "Six days on the Alta Via 1 with a 9 kg pack."},
			{"Copenhagen by bike: a family itinerary", "destinations", "Three days, two kids, one cargo bike and a lot of playgrounds."},
			{"Oaxaca's markets, stall by stall", "destinations", "Mole, mezcal and hand-woven textiles: a morning at Benito Juárez market."},
			{"Packing light: one bag for two weeks", "guides", "The exact list our editor used for a fortnight in Japan."},
			{"How to beat jet lag, according to sleep researchers", "guides", "Light, timing and caffeine matter more than melatonin."},
			{"Travel insurance explained without the small print", "guides", "What a good policy covers and the exclusions that catch people out."},
			{"Rail passes compared: when they pay off", "guides", "We priced six European itineraries with and without a pass."},
			{"Taking kids on a long-haul flight", "guides", "Seats, snacks, screens and sleep: advice from parents who have done it."},
			{"Eating well at airports", "guides", "Where to find real food at twelve of the busiest hubs."},
			{"Accessible city breaks: what to check before you book", "guides", "Step-free access, hotel rooms and transport: the questions to ask."},
			{"How to read a hotel cancellation policy", "guides", "Non-refundable, flexible, pay later: what each really means."},
			{"Sustainable travel: five changes that actually matter", "guides", "Fly less, stay longer and pick trains where they work."},
			{"Flash sale: 30% off Alpine rail holidays", "deals", "Seven nights in Switzerland by train, booked by 31 March."},
			{"Last-minute Canary Islands escapes under €500", "deals", "Flights and four nights' half board from five UK airports."},
			{"Shoulder-season savings in Greece", "deals", "May and October prices on the islands are up to 40% lower."},
			{"City breaks with free cancellation", "deals", "Twenty hotels that let you cancel up to 24 hours before arrival."},
			{"Kids go free: family deals for the Easter holidays", "deals", "Under-12s stay and eat free at eight resorts."},
			{"Weekend spa retreats from €199", "deals", "Two nights, breakfast and a treatment at six spas."},
			{"Summer escapes: our ten favourite beaches", "summer-escapes", "From Sardinia to the Algarve, beaches our writers return to."},
			{"Summer escapes: lakes you can swim in", "summer-escapes", "Clear, cool and mostly crowd-free: eight lakes across Europe."},
			{"Summer escapes: the best night trains south", "summer-escapes", "Fall asleep in Paris, wake up by the sea."},
			{"Summer escapes: cool mountain towns for hot weeks", "summer-escapes", "Where to go when the city hits 35 °C."},
			{"Summer escapes: island campsites with a view", "summer-escapes", "Pitch a tent within sight of the sea on nine islands."},
			{"Summer escapes: festivals worth travelling for", "summer-escapes", "Music, food and film festivals from June to September."},
			{"Road-tripping Iceland's Ring Road in winter", "destinations", "1,332 km, short days and the northern lights."},
			{"A food lover's weekend in Bologna", "destinations", "Tortellini, mortadella and the city's covered porticoes."},
			{"Travel money: cards, cash and fees", "guides", "How to avoid the 3% foreign transaction fee and bad exchange rates."},
			{"Visa-free destinations for 2027", "guides", "Where you can go with just a passport next year, and the new ETIAS rules."},
			{"Cruise deals on the Danube", "deals", "Eight-day river cruises from Passau to Budapest with excursions."},
			{"Reader stories: the trip that changed my mind", "guides", "Six readers on the journeys that surprised them."},
		},
		Ledes: []string{
			"We travelled on our own budget and booked like any reader would; nobody paid for this coverage.",
			"Prices were checked this week and can change quickly, so treat them as a guide rather than a promise.",
			"The best time to go is spring or early autumn, when the weather is mild and the crowds have thinned.",
			"Getting there is half the fun: we took the train where we could and flew only where we had to.",
			"Locals were generous with tips, and several of the best places we found came from a conversation over coffee.",
			"If you only have a short time, focus on one neighbourhood and explore it properly rather than rushing between sights.",
		},
		Points: []string{
			"Book accommodation at least six weeks ahead in high season.",
			"A 72-hour transport pass pays for itself after five trips.",
			"Most museums are free on the **first Sunday** of the month.",
			"Carry some cash: small cafés and markets often refuse cards.",
			"Tap water is safe to drink; bring a refillable bottle.",
			"Sunday trading hours are short, so plan your shopping.",
			"Travel insurance should cover hiking above 2,000 m.",
			"Check the return ferry times before you set off.",
		},
		TableHead: [2]string{"Item", "Typical price"},
		Rows: []tableRow{
			{"Double room, mid-range", "€120"}, {"Three-course dinner", "€35"}, {"Public transport day pass", "€6.40"},
			{"Museum entry", "€12"}, {"Coffee and pastry", "€3.20"}, {"Airport transfer", "€9"},
		},
		Snippets: []snippet{
			{"Add the route to your maps app", "json", "{\n  \"type\": \"FeatureCollection\",\n  \"features\": [\n    {\"type\": \"Feature\", \"properties\": {\"name\": \"Day 1\"},\n     \"geometry\": {\"type\": \"LineString\", \"coordinates\": [[-9.139, 38.713], [-9.133, 38.711]]}}\n  ]\n}"},
			{"Our packing list", "yaml", "clothes:\n  - 3 t-shirts\n  - 1 merino jumper\n  - rain shell\ntech:\n  - universal adaptor\n  - power bank (under 100 Wh)\n"},
			{"Check live departures", "bash", "curl -s 'https://api.acme.test/v1/departures?station=LIS&limit=5' | jq '.[] | {time, destination}'"},
		},
		Links: []link{
			{"Our booking conditions", "https://acme.test/booking-conditions"},
			{"Travel advice by country", "https://acme.test/travel-advice"},
			{"The Summer Escapes collection", "https://acme.test/summer-escapes"},
			{"How we test trips", "https://acme.test/about/how-we-test"},
		},
		Hashtags: []string{"#AcmeTravel", "#TravelTips", "#SummerEscapes"},
		BulkSubjects: []string{
			"weekend in Porto", "Alpine lakes", "night trains", "Greek islands", "Baltic capitals",
			"family campsites", "city museums", "coastal walks", "food markets", "ski resorts",
			"river cruises", "desert camps", "hostel stays", "road trips", "wine regions",
		},
	},
	{
		Slug: "lumen-health", Name: "Lumen Health", Timezone: "Europe/Berlin", Domain: "lumen.test",
		Channels: []string{"linkedin", "facebook", "x", "bluesky"},
		Lead:     person{"lead", "Dr Helen Cho"}, Editor: person{"editor", "Ravi Menon"},
		Reviewer: person{"reviewer", "Grace Adeyemi"}, Viewer: person{"viewer", "Olivia Brandt"},
		Collections: []collection{
			{"research", "Research", "section", "New studies, explained carefully, with their limits."},
			{"wellbeing", "Wellbeing", "section", "Everyday health: sleep, food, movement and stress."},
			{"clinics", "Our clinics", "section", "News about Lumen's clinics, teams and services."},
			{"flu-season", "Flu season 2026", "campaign", "The **flu vaccination campaign**: who, where and when."},
		},
		Stories: []story{
			{"New trial shows promise for early Alzheimer's detection", "research", "A blood test identified early changes in 88% of cases, but it is not yet ready for clinics."},
			{"What the latest vitamin D study really found", "research", "Supplements helped people who were deficient, and made little difference for everyone else."},
			{"Gut bacteria and mood: what we know so far", "research", "The links are real but mostly from small studies; here is what holds up."},
			{"Wearables in cardiology: the evidence in 2026", "research", "Smartwatches catch atrial fibrillation well, with false alarms to manage."},
			{"Antibiotic resistance: a new class of drug enters trials", "research", "The first new class against gram-negative bacteria in decades begins phase II."},
			{"Sleep and memory: a review of recent findings", "research", "Deep sleep consolidates memories; missing it has measurable costs."},
			{"Long COVID clinic outcomes after two years", "research", "Two thirds of our patients report clear improvement; a third still struggle."},
			{"How we read a medical study (and how you can too)", "research", "Sample size, controls and absolute risk: a checklist in five questions."},
			{"Walking 7,000 steps: is it enough?", "wellbeing", "The benefits level off sooner than the famous 10,000 suggests."},
			{"A beginner's guide to strength training after 50", "wellbeing", "Two sessions a week protect muscle, bones and balance."},
			{"Eating for heart health without the fads", "wellbeing", "Fibre, fish, nuts and less salt still beat any single superfood."},
			{"Managing stress at work: techniques that help", "wellbeing", "Breathing, boundaries and breaks, with the evidence for each."},
			{"Screen time and children's sleep", "wellbeing", "An hour without screens before bed adds twenty minutes of sleep on average."},
			{"Hydration myths, checked", "wellbeing", "No, you do not need eight glasses a day on top of what you eat."},
			{"Mindfulness apps compared", "wellbeing", "We tried six apps for a month; two stood out."},
			{"Understanding your blood pressure reading", "wellbeing", "What the two numbers mean and when to see a doctor."},
			{"Lumen opens a walk-in clinic in Riverside", "clinics", "Open seven days a week from 8:00 to 20:00, no appointment needed."},
			{"Online appointments: how to book and what to expect", "clinics", "Video consultations now cover 40% of routine appointments."},
			{"Meet our new paediatrics team", "clinics", "Four paediatricians and two specialist nurses join the Central clinic."},
			{"Weekend opening hours extended at three clinics", "clinics", "Central, Riverside and Northgate now open on Saturdays and Sundays."},
			{"Physiotherapy waiting times fall by a third", "clinics", "The average wait is now 11 days, down from 17."},
			{"How we handle your health records", "clinics", "Who can see your records, how long we keep them and how to ask for a copy."},
			{"Flu season: who should get vaccinated this year", "flu-season", "Everyone over 65, pregnant women, children from two and people with long-term conditions."},
			{"Flu or cold? How to tell the difference", "flu-season", "Flu starts suddenly and knocks you off your feet; colds creep in."},
			{"Vaccination clinics: dates and locations", "flu-season", "Walk-in sessions at all clinics every Saturday in October and November."},
			{"Flu vaccines for children: common questions", "flu-season", "The nasal spray is quick, painless and offered from age two."},
			{"Protecting older relatives during flu season", "flu-season", "Vaccination, hand washing and staying away when you are ill."},
			{"How flu vaccines are updated each year", "flu-season", "Why the strains change and how the WHO decides."},
			{"Allergy season starts early this year", "wellbeing", "A warm February brought tree pollen three weeks ahead of schedule."},
			{"What a dermatologist wants you to know about sunscreen", "wellbeing", "SPF 30, enough of it, and reapplied every two hours."},
			{"Migraine: new treatments explained", "research", "CGRP medicines reduce attacks for many people who found nothing else worked."},
			{"Diabetes prevention programme: first-year results", "research", "Participants lost an average of 4.1 kg and half reached normal blood sugar."},
			{"Pharmacy services now available at every clinic", "clinics", "Collect prescriptions and get advice without a separate trip."},
			{"Caring for a family member with dementia", "wellbeing", "Practical support, respite care and looking after yourself."},
			{"Patient stories: recovering from knee surgery", "clinics", "Three patients on the months after a knee replacement."},
			{"Flu season dashboard: weekly cases", "flu-season", "Confirmed cases, vaccination uptake and clinic capacity, updated every Monday."},
		},
		Ledes: []string{
			"This article is for general information and does not replace advice from your own doctor.",
			"The study was peer reviewed and published this month; we summarise its methods and its limits below.",
			"Our clinicians reviewed the evidence and explain what it means for patients in practice.",
			"Most people will not need to change anything, but some groups should talk to a clinician.",
			"Numbers in health stories are easy to misread, so we give absolute risks wherever we can.",
			"We asked patients what they wanted to know, and built this guide around their questions.",
		},
		Points: []string{
			"Talk to your GP before starting any new supplement.",
			"The effect was strongest in people over 60.",
			"Side effects were mild and short-lived in most participants.",
			"The trial included **2,400 adults** across nine countries.",
			"Results have not yet been replicated in a second study.",
			"Book online or call the clinic on weekdays before 18:00.",
			"Bring a list of your current medicines to the appointment.",
			"Children under two need a different schedule.",
		},
		TableHead: [2]string{"Group", "Result"},
		Rows: []tableRow{
			{"Participants", "2,400"}, {"Follow-up", "24 months"}, {"Relative risk reduction", "18%"},
			{"Absolute risk reduction", "1.2 percentage points"}, {"Vaccination uptake (65+)", "71%"}, {"Average wait", "11 days"},
		},
		Snippets: []snippet{
			{"How we calculated the risk", "python", "control, treated = 0.066, 0.054\narr = control - treated          # absolute risk reduction\nnnt = round(1 / arr)              # number needed to treat\nprint(f\"ARR {arr:.1%}, NNT {nnt}\")"},
			{"Dashboard query", "sql", "select date_trunc('week', confirmed_at) as week, count(*) as cases\nfrom flu_cases\nwhere confirmed_at >= now() - interval '12 weeks'\ngroup by 1 order by 1;"},
			{"Clinic opening hours", "json", "{\n  \"clinic\": \"Riverside\",\n  \"weekdays\": \"08:00-20:00\",\n  \"weekend\": \"09:00-17:00\",\n  \"walk_in\": true\n}"},
		},
		Links: []link{
			{"Book an appointment", "https://lumen.test/appointments"},
			{"Flu season 2026", "https://lumen.test/flu-season"},
			{"How we check health claims", "https://lumen.test/about/editorial-standards"},
			{"Find a clinic", "https://lumen.test/clinics"},
		},
		Hashtags: []string{"#LumenHealth", "#FluSeason", "#HealthNews"},
		BulkSubjects: []string{
			"blood pressure", "sleep hygiene", "flu vaccination", "knee surgery", "child nutrition",
			"migraine care", "heart health", "allergy season", "skin checks", "physiotherapy",
			"mental health", "diabetes prevention", "hearing tests", "travel vaccines", "healthy ageing",
		},
	},
}

// Review notes are markdown, as reviewers write them in the dashboard.
var (
	approveNotes = []string{
		"Looks good. Checked the figures against the source, **all correct**.",
		"Approved. Nice work on the table; the headline is sharp.",
		"Approved with one small follow-up:\n\n- add the photographer's credit under the second image.",
		"Good to go. Links checked, quotes attributed.",
		"Approved. I tightened nothing; it reads well as is.",
	}
	changesNotes = []string{
		"A few things before this can go out:\n\n1. The second paragraph needs a source for the figure.\n2. The headline promises more than the piece delivers.\n3. Alt text is missing on the first image.",
		"Please **check the numbers in the table**: the total does not match the sum of the rows.",
		"The link to the source is broken, and the quote in the third section needs a name.\n\nOtherwise close.",
		"Too long for the section. Can you cut it by a third and move the background to a box?",
		"We need a response from the council (or the company) before publishing. See [our standards](https://masthead.test/standards#right-of-reply).",
	}
	commentNotes = []string{
		"Could we get a better lead image? The current one is a bit dark.",
		"Heads-up: legal asked to see anything naming individuals before it goes out.",
		"Nice angle. Consider adding a short *what happens next* section.",
		"The code block renders fine on mobile, checked on two phones.",
	}
	submitNotes = []string{
		"Ready for review.",
		"First draft, figures checked against the source.",
		"Updated after your notes: sources added and headline changed.",
		"",
	}
	withdrawNotes = []string{"Pulling this back to add the latest figures."}
	archiveNotes  = []string{"Out of date; superseded by newer coverage.", "Spiked: the story did not stand up."}
)
